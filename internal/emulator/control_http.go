package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// controlPrefix is the path prefix of the control API (JSON, same bearer token as the GKE API).
const controlPrefix = "/emulator/v1/"

// controlHandler serves the Controller methods as JSON under /emulator/v1/.
func (e *Emulator) controlHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, f func(r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !e.authorized(r) {
				writeError(w, errUnauthenticated)
				return
			}
			out, err := f(r)
			if err != nil {
				writeError(w, apierr.Invalid("%v", err))
				return
			}
			if out == nil {
				out = struct{}{}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
		})
	}
	handle("POST "+controlPrefix+"reset", func(r *http.Request) (any, error) { return nil, e.Reset(r.Context()) })
	handle("PUT "+controlPrefix+"latencies", func(r *http.Request) (any, error) {
		var in map[string]string
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		l, err := parseLatencies(in)
		if err != nil {
			return nil, err
		}
		return nil, e.SetLatencies(r.Context(), l)
	})
	handle("PUT "+controlPrefix+"clusterLatencies", func(r *http.Request) (any, error) {
		var in clusterLatenciesBody
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		l, err := parseLatencies(in.Latencies)
		if err != nil {
			return nil, err
		}
		return nil, e.SetClusterLatencies(r.Context(), in.Cluster, l)
	})
	handle("POST "+controlPrefix+"capacity", withBody(e.SetCapacity))
	handle("POST "+controlPrefix+"quota", withBody(e.SetQuota))
	handle("POST "+controlPrefix+"faults", func(r *http.Request) (any, error) {
		var in Fault
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		id, err := e.InjectFault(r.Context(), in)
		return map[string]string{"id": id}, err
	})
	handle("DELETE "+controlPrefix+"faults", func(r *http.Request) (any, error) { return nil, e.ClearFaults(r.Context()) })
	handle("POST "+controlPrefix+"operationFaults", withBody(e.FailNextOperation))
	handle("POST "+controlPrefix+"hostFailures", withBody(e.FailHost))
	handle("POST "+controlPrefix+"rayJobOutcomes", withBody(e.SetRayJobOutcome))
	handle("GET "+controlPrefix+"requests", func(r *http.Request) (any, error) {
		reqs, err := e.Requests(r.Context())
		return map[string]any{"requests": reqs}, err
	})
	handle("GET "+controlPrefix+"counters", func(r *http.Request) (any, error) {
		c, err := e.Counters(r.Context())
		return map[string]any{"counters": c}, err
	})
	handle("POST "+controlPrefix+"resourcePolicies", withBody(e.CreateResourcePolicy))
	handle("POST "+controlPrefix+"reservations", withBody(e.CreateReservation))
	handle("POST "+controlPrefix+"poolScales", withBody(e.ScalePool))
	handle("GET "+controlPrefix+"dnsEndpointCA", func(r *http.Request) (any, error) {
		return map[string]string{"pem": string(e.DNSEndpointCAPEM())}, nil
	})
	handle("GET "+controlPrefix+"rayCRDInstalls", func(r *http.Request) (any, error) {
		installs, err := e.RayCRDInstalls(r.Context())
		return map[string]any{"installs": installs}, err
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("No control method %s %s.", r.Method, r.URL.Path))
	})
	return mux
}

// decodeStrict reads a control request body, refusing unknown fields (a typo must not pass as a
// no-op).
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// withBody adapts a Controller setter taking one JSON request body.
func withBody[T any](set func(context.Context, T) error) func(r *http.Request) (any, error) {
	return func(r *http.Request) (any, error) {
		var in T
		if err := decodeStrict(r, &in); err != nil {
			return nil, err
		}
		return nil, set(r.Context(), in)
	}
}

// clusterLatenciesBody is the body of PUT clusterLatencies: latencies as durations ("1.5s").
type clusterLatenciesBody struct {
	Cluster   string            `json:"cluster"`
	Latencies map[string]string `json:"latencies"`
}

// parseLatencies reads the durations of a latencies body.
func parseLatencies(in map[string]string) (map[string]time.Duration, error) {
	l := map[string]time.Duration{}
	for k, v := range in {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("latency of %s: %w", k, err)
		}
		l[k] = d
	}
	return l, nil
}
