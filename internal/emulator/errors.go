package emulator

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
)

// apiError is an error the emulator answers in Google's JSON error shape
// ({"error":{"code","message","errors","status","details"}}), which both Google Go clients decode:
// the REST gapic client into an *apierror.APIError (status codes from the HTTP code), the discovery
// client into a *googleapi.Error (whose Errors come from the legacy "errors" array).
type apiError struct {
	HTTPStatus int
	Code       codes.Code
	Message    string
	// Reason goes into a google.rpc.ErrorInfo detail when set.
	Reason string
	// LegacyReason overrides the reason of the legacy "errors" entry (legacyReason of Code).
	LegacyReason string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.HTTPStatus, statusName(e.Code), e.Message)
}

// httpStatusFor is the HTTP code Google's front ends use for a canonical code
// (google.rpc.Code's documented HTTP mapping).
func httpStatusFor(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Canceled:
		return 499
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

// statusName is the google.rpc.Code enum name, e.g. FAILED_PRECONDITION.
func statusName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELLED"
	}
	var b strings.Builder
	for i, r := range c.String() {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// parseStatusName turns FAILED_PRECONDITION (or FailedPrecondition) into a code.
func parseStatusName(s string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.EqualFold(s, statusName(c)) || strings.EqualFold(s, c.String()) {
			return c, true
		}
	}
	return codes.Unknown, false
}

func newError(c codes.Code, format string, args ...any) *apiError {
	return &apiError{HTTPStatus: httpStatusFor(c), Code: c, Message: fmt.Sprintf(format, args...)}
}

func errInvalid(format string, args ...any) *apiError {
	return newError(codes.InvalidArgument, format, args...)
}

func errNotFound(format string, args ...any) *apiError {
	return newError(codes.NotFound, format, args...)
}

type errorBody struct {
	Error errorStatus `json:"error"`
}

type errorStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Errors is the legacy (Google API v1 style) error list that Google front ends still send with
	// the google.rpc.Status fields; clients of the discovery libraries read it (googleapi.Error's
	// Errors), e.g. terraform-provider-google's IsFailedPreconditionError retries a 400 whose
	// errors[].reason is "failedPrecondition" (google/tpgresource/utils.go).
	Errors  []legacyErrorItem `json:"errors,omitempty"`
	Status  string            `json:"status,omitempty"`
	Details []map[string]any  `json:"details,omitempty"`
}

// legacyErrorItem is one entry of the legacy "errors" array.
type legacyErrorItem struct {
	Message string `json:"message"`
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
}

// legacyReason is the reason Google's front ends put in the legacy "errors" array for a canonical
// code. The ones GKE users quote: "badRequest" (400 INVALID_ARGUMENT, "Auto_upgrade and
// auto_repair cannot be false when release_channel REGULAR is set., badRequest",
// github.com/kaiwaehner/hivemq-mqtt-tensorflow-kafka-realtime-iot-machine-learning-training-inference/issues/47),
// "failedPrecondition" (terraform-provider-google #3650, #10366), "notFound" (#7851),
// "alreadyExists" (terraform-google-modules/terraform-google-kubernetes-engine #367) and
// "rateLimitExceeded" for 429 RESOURCE_EXHAUSTED (google-gemini/gemini-cli #14831 shows a Google
// front end's 429 body). The rest follow the same front ends' naming.
func legacyReason(c codes.Code) string {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return "badRequest"
	case codes.FailedPrecondition:
		return "failedPrecondition"
	case codes.NotFound:
		return "notFound"
	case codes.AlreadyExists:
		return "alreadyExists"
	case codes.Aborted:
		return "aborted"
	case codes.ResourceExhausted:
		return "rateLimitExceeded"
	case codes.Unauthenticated:
		return "authError"
	case codes.PermissionDenied:
		return "forbidden"
	case codes.Unimplemented:
		return "notImplemented"
	case codes.Canceled:
		return "cancelled"
	case codes.DeadlineExceeded:
		return "deadlineExceeded"
	default:
		return "backendError"
	}
}

func (e *apiError) legacyItems() []legacyErrorItem {
	reason := e.LegacyReason
	if reason == "" {
		reason = legacyReason(e.Code)
	}
	return []legacyErrorItem{{Message: e.Message, Domain: "global", Reason: reason}}
}

// body is the error's JSON; legacy adds the "errors" list.
func (e *apiError) body(legacy bool) errorBody {
	b := errorBody{Error: errorStatus{Code: e.HTTPStatus, Message: e.Message, Status: statusName(e.Code)}}
	if legacy {
		b.Error.Errors = e.legacyItems()
	}
	if e.Reason != "" {
		b.Error.Details = append(b.Error.Details, map[string]any{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": e.Reason,
			"domain": "container.googleapis.com",
		})
	}
	b.Error.Details = append(b.Error.Details, map[string]any{
		"@type":     "type.googleapis.com/google.rpc.RequestInfo",
		"requestId": "0x" + randomHex(8),
	})
	return b
}

// writeError answers with the legacy "errors" list, as to the JSON API's alt=json requests.
func writeError(w http.ResponseWriter, e *apiError) { writeStatusError(w, e, true) }

func writeStatusError(w http.ResponseWriter, e *apiError, legacy bool) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.HTTPStatus)
	_ = json.NewEncoder(w).Encode(e.body(legacy))
}

// errorWriterFor picks the error shape a GKE client gets. The discovery clients
// (google.golang.org/api/container/v1, and terraform-provider-google through it) send alt=json and
// get the legacy "errors" list next to status and details: their errors read "googleapi: Error
// 400: ..., failedPrecondition" (terraform-provider-google #3650, #10366). The REST gapic clients
// (cloud.google.com/go/container/apiv1) send $alt=json;enum-encoding=int and get a plain
// google.rpc.Status: gax-go's apierror reads a body with any other field as no details at all
// (github.com/googleapis/gax-go/v2 apierror.parseHTTPDetails unmarshals it strictly into
// {"error":{"code","message","status","details"}}), so an "errors" list would hide the ErrorInfo
// reasons (e.g. CLUSTER_ALREADY_HAS_OPERATION) that GKE gives them.
func errorWriterFor(r *http.Request) func(http.ResponseWriter, *apiError) {
	if strings.Contains(r.URL.RawQuery, "$alt=") || strings.Contains(r.URL.RawQuery, "%24alt=") {
		return func(w http.ResponseWriter, e *apiError) { writeStatusError(w, e, false) }
	}
	return writeError
}

// writeComputeError answers in Compute Engine's shape, which has the legacy list and no status or
// details: {"error":{"code":404,"message":"The resource '...' was not found","errors":[{"message":
// ...,"domain":"global","reason":"notFound"}]}}.
func writeComputeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.HTTPStatus)
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorStatus{Code: e.HTTPStatus, Message: e.Message, Errors: e.legacyItems()}})
}

func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	return hex.EncodeToString(b)
}
