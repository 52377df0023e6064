package emulator

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// computePrefix is where the emulator serves Compute Engine: the base path for
// google.golang.org/api/compute/v1 (option.WithEndpoint(Endpoint()+"/compute/v1/")) and for
// terraform-provider-google's compute_custom_endpoint.
const computePrefix = "/compute/v1/"

// The slice of Compute Engine that GKE users (and terraform-provider-google) touch around TPU node
// pools, in the JSON of google.golang.org/api/compute/v1:
//   - instanceGroupManagers get and list (zonal), one per zone of every node pool, named by the
//     pool's instanceGroupUrls: terraform-provider-google reads a node pool's node_count as the sum
//     of their targetSize divided by their number (google/services/container/
//     resource_container_node_pool.go, flattenNodePool), and takes a 404 there as the pool gone;
//   - machineTypes get and list (zonal), from the emulator's table (machines): what the cluster
//     autoscaler reads of a machine type (guestCpus, memoryMb) and raytpu's plan-time check of
//     node auto-provisioning limits;
//   - reservations get, list (zonal) and aggregatedList, for what a slice can take of them;
//   - resourcePolicies insert, get, list and delete (regional), the workload policies that place
//     multi-host tpu7x slices (placementPolicy.policyName);
//   - zonal and regional operations get and wait.

// computeRoute is a resolved Compute Engine request.
type computeRoute struct {
	method  string // the Compute Engine method id, e.g. compute.resourcePolicies.insert
	project string
	scope   string // "zones" or "regions"
	where   string // the zone or the region
	name    string // the resource or operation named, "" for a collection
	run     computeHandler
}

func (r computeRoute) parent() string {
	return "projects/" + r.project + "/" + r.scope + "/" + r.where
}

func (e *Emulator) serveCompute(w http.ResponseWriter, r *http.Request) {
	rt, rerr := parseComputeRoute(r.Method, r.URL.Path)
	e.serveAPI(w, r, apiRequest{
		rpc:      rt.method,
		routeErr: rerr,
		writeErr: writeComputeError,
		run: func(ctx context.Context, body []byte) ([]byte, *apierr.Error) {
			resp, aerr := rt.run(e, ctx, rt, body)
			if aerr != nil {
				return nil, aerr
			}
			b, err := json.Marshal(resp)
			if err != nil {
				return nil, apierr.New(codes.Internal, "encoding the response: %v", err)
			}
			return b, nil
		},
	})
}

// computeURL is the URL of a Compute Engine resource at the emulator (Compute's selfLinks name
// https://www.googleapis.com/compute/v1/...; the emulator's resolve).
func (e *Emulator) computeURL(path string) string { return e.endpoint + computePrefix + path }

// computeTime is Compute Engine's timestamp format (RFC 3339 with milliseconds and an offset).
func computeTime(t time.Time) string { return t.Format("2006-01-02T15:04:05.000-07:00") }

// stableID is a Compute Engine numeric id derived from a string, so a resource that the emulator
// derives from GKE state (an instance group manager) keeps its id.
func stableID(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8]) >> 1
}

func randomID() uint64 { return stableID(rules.RandomHex(16)) }

// errComputeNotFound is Compute Engine's 404: "The resource 'projects/p/regions/r/resourcePolicies/x'
// was not found".
func errComputeNotFound(path string) *apierr.Error {
	return apierr.NotFound("The resource '%s' was not found", path)
}

// errComputeInvalid is Compute Engine's 400 for a bad field value, legacy reason "invalid".
func errComputeInvalid(format string, args ...any) *apierr.Error {
	e := apierr.Invalid(format, args...)
	e.LegacyReason = "invalid"
	return e
}
