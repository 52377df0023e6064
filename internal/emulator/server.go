package emulator

import (
	"context"
	"crypto/subtle"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// route is a resolved GKE API request.
type route struct {
	rpc  string // ClusterManager method name, e.g. CreateNodePool
	name resourceName
}

// handler serves the GKE API under /v1/, Compute Engine under /compute/v1/, the control API
// under /emulator/v1/ and the OAuth 2.0 token endpoint at /token.
func (e *Emulator) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/", e.serveGKE)
	mux.HandleFunc(computePrefix, e.serveCompute)
	mux.Handle(controlPrefix, e.controlHandler())
	mux.HandleFunc(tokenPath, e.serveToken)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, apierr.NotFound("The requested URL %s was not found on this server.", r.URL.Path))
	})
	return mux
}

func (e *Emulator) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(e.token)) == 1
}

var errUnauthenticated = &apierr.Error{
	HTTPStatus: http.StatusUnauthorized,
	Code:       codes.Unauthenticated,
	Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or " +
		"other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
	Reason: "ACCESS_TOKEN_TYPE_UNSUPPORTED",
}

// statusRecorder remembers the status code written, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (to hijack it for a lost response).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (e *Emulator) serveGKE(w http.ResponseWriter, r *http.Request) {
	rt, rerr := parseRoute(r.Method, r.URL.Path)
	e.serveAPI(w, r, apiRequest{
		rpc:      rt.rpc,
		routeErr: rerr,
		writeErr: errorWriterFor(r),
		run: func(_ context.Context, body []byte) ([]byte, *apierr.Error) {
			resp, aerr := e.dispatch(rt, body)
			if aerr != nil {
				return nil, aerr
			}
			b, err := marshalOpts.Marshal(resp)
			if err != nil {
				return nil, apierr.New(codes.Internal, "encoding the response: %v", err)
			}
			return b, nil
		},
	})
}

// apiRequest is one request to an emulated Google API, routed.
type apiRequest struct {
	rpc      string        // the method's name in the request log and counters
	routeErr *apierr.Error // set when the path names no method
	writeErr func(http.ResponseWriter, *apierr.Error)
	// run serves the request and returns the JSON response.
	run func(ctx context.Context, body []byte) ([]byte, *apierr.Error)
}

// serveAPI authenticates, applies request faults (before or after the fact), runs and answers a
// request, and records it.
func (e *Emulator) serveAPI(w http.ResponseWriter, r *http.Request, req apiRequest) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rpc := req.rpc
	if req.routeErr != nil {
		rpc = "Unknown"
	}
	lost := ""
	defer func() { e.ctl.record(r.Method, r.URL.Path, rpc, rec.status, lost, start) }()

	if !e.authorized(r) {
		req.writeErr(rec, errUnauthenticated)
		return
	}
	f := e.ctl.matchFault(r.Method, r.URL.Path, rpc)
	if f != nil && f.spec.Lost == "" {
		req.writeErr(rec, f.err)
		return
	}
	if req.routeErr != nil {
		req.writeErr(rec, req.routeErr)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		req.writeErr(rec, apierr.Invalid("reading the request body: %v", err))
		return
	}
	resp, aerr := req.run(r.Context(), body)
	if f != nil {
		// The request has been served (and has acted, if it succeeded); its answer is lost on the
		// way back.
		lost = f.spec.Lost
		e.loseResponse(rec, r, f, req.writeErr)
		return
	}
	if aerr != nil {
		req.writeErr(rec, aerr)
		return
	}
	rec.Header().Set("Content-Type", "application/json; charset=UTF-8")
	rec.WriteHeader(http.StatusOK)
	_, _ = rec.Write(resp)
}

// loseResponse answers a request that took effect as a fault with Lost set says: an error in
// place of the response, a reset connection, or a response held until the client gives up (or
// the hold ends) and then a closed connection.
func (e *Emulator) loseResponse(rec *statusRecorder, r *http.Request, f *fault, writeErr func(http.ResponseWriter, *apierr.Error)) {
	switch f.spec.Lost {
	case LostError:
		writeErr(rec, f.err)
		return
	case LostTimeout:
		hold := f.spec.Hold
		if hold <= 0 {
			hold = DefaultLostHold
		}
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-e.bgCtx.Done():
		}
		t.Stop()
	}
	rec.status = 0
	conn, _, err := http.NewResponseController(rec).Hijack()
	if err != nil {
		// Not an HTTP/1 connection: end the handler without a body, the closest the server can do.
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST, as a reset connection
	}
	_ = conn.Close()
}

var marshalOpts = protojson.MarshalOptions{}

var unmarshalOpts = protojson.UnmarshalOptions{DiscardUnknown: true}

func decodeBody(body []byte, m proto.Message) *apierr.Error {
	if len(body) == 0 {
		return nil
	}
	if err := unmarshalOpts.Unmarshal(body, m); err != nil {
		return apierr.Invalid("Invalid JSON payload received. %v", err)
	}
	return nil
}

// legacyVerbs are the path segments that the zonal (legacy) v1 paths end with where the
// locations paths have a ":verb", as google.golang.org/api/container/v1 calls them
// (container-api.json: projects.zones.clusters.{addons,legacyAbac,locations,logging,master,
// monitoring,resourceLabels} and projects.zones.clusters.nodePools.{autoscaling,setManagement,
// setSize,update}).
var legacyVerbs = map[string]string{
	"addons": "setAddons", "legacyAbac": "setLegacyAbac", "locations": "setLocations", "logging": "setLogging",
	"master": "updateMaster", "monitoring": "setMonitoring", "resourceLabels": "setResourceLabels",
}

var legacyPoolVerbs = map[string]string{
	"autoscaling": "setAutoscaling", "setManagement": "setManagement", "setSize": "setSize", "update": "update",
}

// clusterVerbs and poolVerbs map a POST ":verb" to its ClusterManager RPC.
var clusterVerbs = map[string]string{
	"setAddons": "SetAddonsConfig", "setLegacyAbac": "SetLegacyAbac", "setLocations": "SetLocations",
	"setLogging": "SetLoggingService", "setMonitoring": "SetMonitoringService", "updateMaster": "UpdateMaster",
	"setResourceLabels": "SetLabels", "setMaintenancePolicy": "SetMaintenancePolicy", "setMasterAuth": "SetMasterAuth",
	"setNetworkPolicy": "SetNetworkPolicy", "startIpRotation": "StartIPRotation", "completeIpRotation": "CompleteIPRotation",
}

var poolVerbs = map[string]string{
	"setSize": "SetNodePoolSize", "setAutoscaling": "SetNodePoolAutoscaling", "setManagement": "SetNodePoolManagement",
	"rollback": "RollbackNodePoolUpgrade", "completeUpgrade": "CompleteNodePoolUpgrade", "update": "UpdateNodePool",
}

// parseRoute maps a method and path to a ClusterManager RPC. Paths are those of the REST
// clients, in both forms of the v1 API: /v1/projects/{p}/locations/{l}/{clusters|operations|
// serverConfig}/... (cloud.google.com/go/container/apiv1, google.golang.org/api/container/v1
// Projects.Locations) and the legacy /v1/projects/{p}/zones/{z}/{clusters|operations|serverconfig}/...
// (google.golang.org/api/container/v1 Projects.Zones), whose verbs are path segments
// (.../clusters/{c}/addons) or ":verb"s (.../clusters/{c}:setMasterAuth).
func parseRoute(method, path string) (route, *apierr.Error) {
	notFound := func() (route, *apierr.Error) {
		return route{}, apierr.NotFound("The requested URL %s was not found on this server.", path)
	}
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return notFound()
	}
	seg := strings.Split(rest, "/")
	verb := ""
	if last := seg[len(seg)-1]; strings.Contains(last, ":") {
		name, v, _ := strings.Cut(last, ":")
		seg[len(seg)-1], verb = name, v
	}
	if len(seg) < 5 || seg[0] != "projects" || (seg[2] != "locations" && seg[2] != "zones") {
		return notFound()
	}
	for _, s := range seg {
		if s == "" {
			return notFound()
		}
	}
	if seg[2] == "zones" {
		switch {
		case len(seg) == 5 && seg[4] == "serverconfig":
			seg[4] = "serverConfig"
		case len(seg) == 5 && seg[4] == "serverConfig":
			return notFound()
		case verb == "" && len(seg) == 7 && seg[4] == "clusters" && legacyVerbs[seg[6]] != "":
			seg, verb = seg[:6], legacyVerbs[seg[6]]
		case verb == "" && len(seg) == 9 && seg[4] == "clusters" && seg[6] == "nodePools" && legacyPoolVerbs[seg[8]] != "":
			seg, verb = seg[:8], legacyPoolVerbs[seg[8]]
		}
	}
	n := resourceName{Project: seg[1], Location: seg[3]}
	rt := route{name: n}
	is := func(m, v string, rpc string) bool {
		if method == m && verb == v {
			rt.rpc = rpc
			return true
		}
		return false
	}
	isVerb := func(verbs map[string]string) bool {
		if rpc := verbs[verb]; method == http.MethodPost && rpc != "" {
			rt.rpc = rpc
			return true
		}
		return false
	}
	switch {
	case len(seg) == 5 && seg[4] == "serverConfig":
		if is("GET", "", "GetServerConfig") {
			return rt, nil
		}
	case len(seg) == 5 && seg[4] == "clusters":
		if is("GET", "", "ListClusters") || is("POST", "", "CreateCluster") {
			return rt, nil
		}
	case len(seg) == 6 && seg[4] == "clusters":
		rt.name.Cluster = seg[5]
		if is("GET", "", "GetCluster") || is("PUT", "", "UpdateCluster") || is("DELETE", "", "DeleteCluster") || isVerb(clusterVerbs) {
			return rt, nil
		}
		if verb != "" {
			return route{}, apierr.New(codes.Unimplemented, "The emulator does not implement clusters:%s.", verb)
		}
	case len(seg) == 7 && seg[4] == "clusters" && seg[6] == "nodePools":
		rt.name.Cluster = seg[5]
		if is("GET", "", "ListNodePools") || is("POST", "", "CreateNodePool") {
			return rt, nil
		}
	case len(seg) == 8 && seg[4] == "clusters" && seg[6] == "nodePools":
		rt.name.Cluster, rt.name.NodePool = seg[5], seg[7]
		if is("GET", "", "GetNodePool") || is("PUT", "", "UpdateNodePool") || is("DELETE", "", "DeleteNodePool") || isVerb(poolVerbs) {
			return rt, nil
		}
		if verb != "" {
			return route{}, apierr.New(codes.Unimplemented, "The emulator does not implement nodePools:%s.", verb)
		}
	case len(seg) == 5 && seg[4] == "operations":
		if is("GET", "", "ListOperations") {
			return rt, nil
		}
	case len(seg) == 6 && seg[4] == "operations":
		rt.name.Operation = seg[5]
		if is("GET", "", "GetOperation") || is("POST", "cancel", "CancelOperation") {
			return rt, nil
		}
	}
	return notFound()
}

// dispatch runs one RPC.
func (e *Emulator) dispatch(rt route, body []byte) (proto.Message, *apierr.Error) {
	n := rt.name
	switch rt.rpc {
	case "GetServerConfig":
		return rules.ServerConfig(), nil
	case "ListClusters":
		return e.listClusters(n), nil
	case "GetCluster":
		return e.getCluster(n)
	case "CreateCluster":
		return e.createCluster(n, body)
	case "UpdateCluster":
		return e.updateCluster(n, body)
	case "SetAddonsConfig":
		return e.setAddons(n, body)
	case "SetLabels":
		return e.setResourceLabels(n, body)
	case "SetLegacyAbac", "SetLocations", "SetLoggingService", "SetMonitoringService", "UpdateMaster",
		"SetMaintenancePolicy", "SetMasterAuth", "SetNetworkPolicy", "StartIPRotation", "CompleteIPRotation":
		return e.setClusterField(rt.rpc, n, body)
	case "SetNodePoolAutoscaling", "SetNodePoolManagement", "RollbackNodePoolUpgrade":
		return e.setNodePoolField(rt.rpc, n, body)
	case "CompleteNodePoolUpgrade":
		return e.completeNodePoolUpgrade(n)
	case "DeleteCluster":
		return e.deleteCluster(n)
	case "ListNodePools":
		return e.listNodePools(n)
	case "GetNodePool":
		return e.getNodePool(n)
	case "CreateNodePool":
		return e.createNodePool(n, body)
	case "UpdateNodePool":
		return e.updateNodePool(n, body)
	case "SetNodePoolSize":
		return e.setNodePoolSize(n, body)
	case "DeleteNodePool":
		return e.deleteNodePool(n)
	case "ListOperations":
		return e.listOperations(n), nil
	case "GetOperation":
		return e.getOperation(n)
	case "CancelOperation":
		return e.cancelOperation(n)
	}
	return nil, apierr.New(codes.Unimplemented, "%s is not implemented", rt.rpc)
}
