package gke

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// code returns the canonical code of an API error, codes.Unknown for anything else. REST errors
// carry the code by name in the body ("status": "ALREADY_EXISTS"); the client library maps only
// the HTTP status, which loses FAILED_PRECONDITION (400) and ALREADY_EXISTS (409), so the body
// wins when it names one.
func code(err error) codes.Code {
	var httpErr *googleapi.Error
	if errors.As(err, &httpErr) {
		var body struct {
			Error struct {
				Status codes.Code `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(httpErr.Body), &body) == nil && body.Error.Status != codes.OK {
			return body.Error.Status
		}
		return httpCode(httpErr.Code)
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}

func httpCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	}
	if status >= 500 {
		return codes.Internal
	}
	return codes.Unknown
}

// IsNotFound reports a 404.
func IsNotFound(err error) bool { return code(err) == codes.NotFound }

// IsAlreadyExists reports a 409.
func IsAlreadyExists(err error) bool { return code(err) == codes.AlreadyExists }

// message is the API's own message for err, without the client library's decoration.
func message(err error) string {
	var apiErr *apierror.APIError
	if errors.As(err, &apiErr) {
		if s := apiErr.GRPCStatus(); s != nil && s.Message() != "" {
			return s.Message()
		}
	}
	if s, ok := status.FromError(err); ok && s.Message() != "" {
		return s.Message()
	}
	return err.Error()
}

// AlreadyCreatedError is a create that a retry found already done, after an earlier attempt whose
// outcome is unknown (its response was lost): most likely the object is this create's own. The
// caller checks that it is before adopting it.
type AlreadyCreatedError struct{ err error }

func (e *AlreadyCreatedError) Error() string {
	return message(e.err) + " (an earlier attempt of this request may have created it: its response was lost)"
}

func (e *AlreadyCreatedError) Unwrap() error { return e.err }

// busyMessages are GKE's answers to an operation that cannot start while others run on the
// cluster: the three of "Troubleshoot concurrent operations" (400 FAILED_PRECONDITION: "Cluster is
// running incompatible operation OP", "Cluster is currently being created, deleted, updated or
// repaired and cannot be updated", "Operation OP is currently ACTIONING cluster C. Please wait and
// try again once it is done"), and the node pool operations cap (429 RESOURCE_EXHAUSTED "Too many
// operations: cluster "C" hits the concurrent operations quota 5, please try again later.",
// terraform-provider-google #15205, #15579).
var busyMessages = []string{
	"incompatible operation",
	"is currently being created, deleted, updated or repaired",
	"please wait and try again once it is done",
	"concurrent operations quota",
}

// Busy reports that GKE refused an operation only because other operations run on the cluster:
// the same request succeeds once they are done.
func Busy(err error) bool {
	switch code(err) {
	case codes.FailedPrecondition, codes.ResourceExhausted:
	default:
		return false
	}
	text := strings.ToLower(message(err))
	for _, m := range busyMessages {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// Advice turns a failure into the next step a user can take. It is empty when there is nothing
// better to say than the error itself.
func Advice(err error) string {
	text := strings.ToLower(err.Error())
	switch {
	case strings.Contains(text, "stockout") || strings.Contains(text, "does not have enough resources"):
		return "The zone has no free TPU capacity of this type right now. Try another zone, a reservation " +
			"(reservation), Spot capacity (spot = true) or flex-start capacity (flex_start = true), or list them in " +
			"fallback to try them in the same apply."
	case strings.Contains(text, "quota"):
		return "The project's TPU quota is too small for this slice. Request more quota for this generation in " +
			"this region, or use a smaller topology."
	case code(err) == codes.PermissionDenied:
		return "The credentials lack permission for this call, or the zone needs an allowlist for this TPU " +
			"generation. Check the principal's roles (roles/container.admin) and the zone's TPU availability."
	case code(err) == codes.Unauthenticated:
		return "The credentials were refused. Check credentials, access_token or GOOGLE_OAUTH_ACCESS_TOKEN."
	}
	return ""
}

// Advised is err with the message of WithAdvice, still wrapping err, for an error passed on.
func Advised(err error) error { return &advisedError{err} }

type advisedError struct{ err error }

func (e *advisedError) Error() string { return WithAdvice(e.err) }
func (e *advisedError) Unwrap() error { return e.err }

// WithAdvice appends Advice to err's message, for diagnostics.
func WithAdvice(err error) string {
	if advice := Advice(err); advice != "" {
		return fmt.Sprintf("%s\n\n%s", message(err), advice)
	}
	return message(err)
}
