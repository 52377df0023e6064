package apierr

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
)

// Error is an error the emulator answers in Google's JSON error shape
// ({"error":{"code","message","errors","status","details"}}), which both Google Go clients decode:
// the REST gapic client into an *apierror.APIError (status codes from the HTTP code), the discovery
// client into a *googleapi.Error (whose Errors come from the legacy "errors" array).
type Error struct {
	HTTPStatus int
	Code       codes.Code
	Message    string
	// Reason goes into a google.rpc.ErrorInfo detail when set.
	Reason string
	// LegacyReason overrides the reason of the legacy "errors" entry (legacyReason of Code).
	LegacyReason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.HTTPStatus, StatusName(e.Code), e.Message)
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

// StatusName is the google.rpc.Code enum name, e.g. FAILED_PRECONDITION.
func StatusName(c codes.Code) string {
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

// ParseStatusName turns FAILED_PRECONDITION (or FailedPrecondition) into a code.
func ParseStatusName(s string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if strings.EqualFold(s, StatusName(c)) || strings.EqualFold(s, c.String()) {
			return c, true
		}
	}
	return codes.Unknown, false
}

// New is an error with code c and the HTTP status Google gives it.
func New(c codes.Code, format string, args ...any) *Error {
	return &Error{HTTPStatus: httpStatusFor(c), Code: c, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 INVALID_ARGUMENT.
func Invalid(format string, args ...any) *Error {
	return New(codes.InvalidArgument, format, args...)
}

// NotFound is a 404 NOT_FOUND.
func NotFound(format string, args ...any) *Error {
	return New(codes.NotFound, format, args...)
}

// Body is Google's JSON error shape, {"error": ...}.
type Body struct {
	Error Status `json:"error"`
}

// Status is the body's "error" object: google.rpc.Status's fields and the legacy list.
type Status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Errors is the legacy (Google API v1 style) error list that Google front ends still send with
	// the google.rpc.Status fields; clients of the discovery libraries read it (googleapi.Error's
	// Errors), e.g. terraform-provider-google's IsFailedPreconditionError retries a 400 whose
	// errors[].reason is "failedPrecondition" (google/tpgresource/utils.go).
	Errors  []LegacyItem     `json:"errors,omitempty"`
	Status  string           `json:"status,omitempty"`
	Details []map[string]any `json:"details,omitempty"`
}

// LegacyItem is one entry of the legacy "errors" array.
type LegacyItem struct {
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

// LegacyItems is the error's legacy "errors" list.
func (e *Error) LegacyItems() []LegacyItem {
	reason := e.LegacyReason
	if reason == "" {
		reason = legacyReason(e.Code)
	}
	return []LegacyItem{{Message: e.Message, Domain: "global", Reason: reason}}
}

// Body is the error's JSON; legacy adds the "errors" list.
func (e *Error) Body(legacy bool) Body {
	b := Body{Error: Status{Code: e.HTTPStatus, Message: e.Message, Status: StatusName(e.Code)}}
	if legacy {
		b.Error.Errors = e.LegacyItems()
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
		"requestId": fmt.Sprintf("0x%016x", rand.Uint64()),
	})
	return b
}
