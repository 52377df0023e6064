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
)

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
			resp, aerr := rt.run(e, rt, body)
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
	var body []byte
	defer func() { e.ctl.record(r.Method, r.URL.Path, rpc, rec.status, lost, start, body) }()

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
	var err error
	if body, err = io.ReadAll(io.LimitReader(r.Body, 8<<20)); err != nil {
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
