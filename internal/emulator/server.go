package emulator

import (
	"crypto/subtle"
	"io"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// route is a resolved GKE API request.
type route struct {
	rpc  string // ClusterManager method name, e.g. CreateNodePool
	name resourceName
}

// handler serves the GKE API under /v1/ and the control API under /emulator/v1/.
func (e *Emulator) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/", e.serveGKE)
	mux.Handle(controlPrefix, e.controlHandler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errNotFound("The requested URL %s was not found on this server.", r.URL.Path))
	})
	return mux
}

func (e *Emulator) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(e.token)) == 1
}

var errUnauthenticated = &apiError{
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

func (e *Emulator) serveGKE(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	rt, rerr := parseRoute(r.Method, r.URL.Path)
	rpc := rt.rpc
	if rerr != nil {
		rpc = "Unknown"
	}
	defer func() { e.ctl.record(r.Method, r.URL.Path, rpc, rec.status, start) }()

	if !e.authorized(r) {
		writeError(rec, errUnauthenticated)
		return
	}
	if f := e.ctl.matchFault(r.Method, r.URL.Path, rpc); f != nil {
		writeError(rec, f)
		return
	}
	if rerr != nil {
		writeError(rec, rerr)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(rec, errInvalid("reading the request body: %v", err))
		return
	}
	resp, aerr := e.dispatch(rt, body)
	if aerr != nil {
		writeError(rec, aerr)
		return
	}
	writeProto(rec, resp)
}

var marshalOpts = protojson.MarshalOptions{}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, err := marshalOpts.Marshal(m)
	if err != nil {
		writeError(w, newError(codes.Internal, "encoding the response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

var unmarshalOpts = protojson.UnmarshalOptions{DiscardUnknown: true}

func decodeBody(body []byte, m proto.Message) *apiError {
	if len(body) == 0 {
		return nil
	}
	if err := unmarshalOpts.Unmarshal(body, m); err != nil {
		return errInvalid("Invalid JSON payload received. %v", err)
	}
	return nil
}

// parseRoute maps a method and path to a ClusterManager RPC. Paths are those of the REST
// clients: /v1/projects/{p}/locations/{l}/{clusters|operations|serverConfig}/...
func parseRoute(method, path string) (route, *apiError) {
	notFound := func() (route, *apiError) {
		return route{}, errNotFound("The requested URL %s was not found on this server.", path)
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
	if len(seg) < 5 || seg[0] != "projects" || seg[2] != "locations" || seg[1] == "" || seg[3] == "" {
		return notFound()
	}
	for _, s := range seg {
		if s == "" {
			return notFound()
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
		if is("GET", "", "GetCluster") || is("PUT", "", "UpdateCluster") || is("DELETE", "", "DeleteCluster") ||
			is("POST", "setAddons", "SetAddonsConfig") || is("POST", "setResourceLabels", "SetLabels") {
			return rt, nil
		}
		if verb != "" {
			return route{}, newError(codes.Unimplemented, "The emulator does not implement clusters:%s.", verb)
		}
	case len(seg) == 7 && seg[4] == "clusters" && seg[6] == "nodePools":
		rt.name.Cluster = seg[5]
		if is("GET", "", "ListNodePools") || is("POST", "", "CreateNodePool") {
			return rt, nil
		}
	case len(seg) == 8 && seg[4] == "clusters" && seg[6] == "nodePools":
		rt.name.Cluster, rt.name.NodePool = seg[5], seg[7]
		if is("GET", "", "GetNodePool") || is("PUT", "", "UpdateNodePool") || is("DELETE", "", "DeleteNodePool") ||
			is("POST", "setSize", "SetNodePoolSize") {
			return rt, nil
		}
		if verb != "" {
			return route{}, newError(codes.Unimplemented, "The emulator does not implement nodePools:%s.", verb)
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
func (e *Emulator) dispatch(rt route, body []byte) (proto.Message, *apiError) {
	n := rt.name
	switch rt.rpc {
	case "GetServerConfig":
		return serverConfig(), nil
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
	return nil, newError(codes.Unimplemented, "%s is not implemented", rt.rpc)
}
