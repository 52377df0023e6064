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
// ({"error":{"code","message","status","details"}}), which both Google Go clients decode: the REST
// gapic client into an *apierror.APIError (status codes from the HTTP code), the discovery client
// into a *googleapi.Error.
type apiError struct {
	HTTPStatus int
	Code       codes.Code
	Message    string
	// Reason goes into a google.rpc.ErrorInfo detail when set.
	Reason string
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
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}

func (e *apiError) body() errorBody {
	b := errorBody{Error: errorStatus{Code: e.HTTPStatus, Message: e.Message, Status: statusName(e.Code)}}
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

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.HTTPStatus)
	_ = json.NewEncoder(w).Encode(e.body())
}

func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	return hex.EncodeToString(b)
}
