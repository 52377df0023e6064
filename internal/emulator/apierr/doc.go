// Package apierr is the emulated GKE's API error: an [Error] with its canonical code, the HTTP
// status and status name Google's front ends give that code, the reason of the legacy "errors"
// list, and the JSON body ([Error.Body]) both Google Go clients decode.
//
// It is pure: no locks, no I/O, nothing of HTTP but the status numbers. Writing a body to an
// http.ResponseWriter, and choosing its shape from the request, is the emulator's HTTP layer
// (package emulator). apierr imports only the standard library and google.golang.org/grpc/codes;
// every other package of the emulator may import it, and it imports none of them.
package apierr
