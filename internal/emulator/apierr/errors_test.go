package apierr

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

func TestStatusNames(t *testing.T) {
	for c, want := range map[codes.Code]string{
		codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Canceled: "CANCELLED", codes.NotFound: "NOT_FOUND",
		codes.ResourceExhausted: "RESOURCE_EXHAUSTED", codes.InvalidArgument: "INVALID_ARGUMENT",
	} {
		if got := StatusName(c); got != want {
			t.Errorf("statusName(%s) = %s", c, got)
		}
		if back, ok := ParseStatusName(want); !ok || back != c {
			t.Errorf("parseStatusName(%s) = %s", want, back)
		}
	}
	if _, ok := ParseStatusName("NOT_A_CODE"); ok {
		t.Error("unknown code parsed")
	}
	e := New(codes.AlreadyExists, "x").Body(true)
	detail, _ := e.Error.Details[0]["@type"].(string)
	if e.Error.Code != 409 || e.Error.Status != "ALREADY_EXISTS" || !strings.Contains(detail, "RequestInfo") ||
		len(e.Error.Errors) != 1 || e.Error.Errors[0] != (LegacyItem{Message: "x", Domain: "global", Reason: "alreadyExists"}) {
		t.Errorf("error body %+v", e)
	}
	if e := New(codes.AlreadyExists, "x").Body(false); e.Error.Errors != nil {
		t.Errorf("a plain google.rpc.Status has no errors list: %+v", e)
	}
}
