package emulator

import (
	"encoding/json"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// writeError answers with the legacy "errors" list, as to the JSON API's alt=json requests.
func writeError(w http.ResponseWriter, e *apierr.Error) { writeStatusError(w, e, true) }

func writeStatusError(w http.ResponseWriter, e *apierr.Error, legacy bool) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.HTTPStatus)
	_ = json.NewEncoder(w).Encode(e.Body(legacy))
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
func errorWriterFor(r *http.Request) func(http.ResponseWriter, *apierr.Error) {
	if strings.Contains(r.URL.RawQuery, "$alt=") || strings.Contains(r.URL.RawQuery, "%24alt=") {
		return func(w http.ResponseWriter, e *apierr.Error) { writeStatusError(w, e, false) }
	}
	return writeError
}

// writeComputeError answers in Compute Engine's shape, which has the legacy list and no status or
// details: {"error":{"code":404,"message":"The resource '...' was not found","errors":[{"message":
// ...,"domain":"global","reason":"notFound"}]}}.
func writeComputeError(w http.ResponseWriter, e *apierr.Error) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.HTTPStatus)
	_ = json.NewEncoder(w).Encode(apierr.Body{Error: apierr.Status{Code: e.HTTPStatus, Message: e.Message, Errors: e.LegacyItems()}})
}

// errAlreadyExists and errClusterNotFound use GKE's wording.
func errAlreadyExists(name string) *apierr.Error {
	return apierr.New(codes.AlreadyExists, "Already exists: %s.", name)
}

func errClusterNotFound(n resourceName) *apierr.Error {
	return apierr.NotFound("Not found: %s.", n.clusterKey())
}

func errPoolNotFound(n resourceName) *apierr.Error {
	return apierr.NotFound("Not found: %s.", n.poolKey())
}
