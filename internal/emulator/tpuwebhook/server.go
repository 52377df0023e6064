package tpuwebhook

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/kubernetes"
)

// Config is what a Server is built from: clients and functions, nothing of the emulator's state.
type Config struct {
	// Kube returns the Kubernetes client of the running cluster with this UID (the path of a
	// request names it), false when there is none. It takes and releases whatever lock its owner
	// needs; the server calls it holding none.
	Kube func(uid string) (kubernetes.Interface, bool)
	// Logf logs the webhook's failures; nil logs nothing.
	Logf func(format string, args ...any)
	// Certificate is the server's TLS certificate, valid for 127.0.0.1.
	Certificate tls.Certificate
	// CAPEM is the PEM of the CA that signed Certificate, the registrations' caBundle.
	CAPEM []byte
}

// Server is the HTTPS server of the webhook for every cluster of an emulator.
type Server struct {
	cfg Config
	url string // https://127.0.0.1:PORT
	srv *http.Server
	// mu serializes mutations as WH's cacheMutex does (WH:107-108), so that the replica and
	// worker indexes it hands out from the Pods it lists never collide.
	mu sync.Mutex
}

// Start listens on a free port of 127.0.0.1 and serves the webhook until Close.
func Start(cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, url: "https://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = s.srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cfg.Certificate}, MinVersion: tls.VersionTLS12}))
	}()
	return s, nil
}

// URL is the server's address, https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// handler routes the webhook's two calls for every cluster.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	// WH:1151-1152 serves /mutate and /validate; here each cluster has its own prefix, so that the
	// webhook lists the Pods of the cluster that called it.
	mux.HandleFunc("POST /clusters/{uid}/mutate", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, true)
	})
	mux.HandleFunc("POST /clusters/{uid}/validate", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, false)
	})
	return mux
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// serve answers an AdmissionReview as WH's Mutate (WH:106-139) and Validate (WH:142-172) do: a
// failure to decide is HTTP 403 with a plain text body, which the kube-apiserver reports as a
// failed webhook call and, the failure policy being Fail (the default, unset in the webhook's
// deployments), turns into a refusal.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, mutate bool) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil {
		http.Error(w, "Error decoding request body", http.StatusBadRequest)
		return
	}
	kind := "RayCluster"
	if mutate {
		kind = "Pod"
	}
	if review.Request == nil || review.Request.Kind.Kind != kind {
		http.Error(w, "Invalid Kind", http.StatusBadRequest)
		return
	}
	var resp *admissionv1.AdmissionResponse
	var err error
	if mutate {
		var kube kubernetes.Interface
		running := false
		if s.cfg.Kube != nil {
			kube, running = s.cfg.Kube(r.PathValue("uid"))
		}
		if !running || kube == nil {
			err = errors.New("the cluster is not running")
		} else {
			s.mu.Lock()
			resp, err = mutateTPUPod(r.Context(), kube, review)
			s.mu.Unlock()
		}
		if err != nil {
			s.logf("TPU webhook: failed to mutate Pod: %v", err)
			http.Error(w, "Failed to mutate Pod", http.StatusForbidden)
			return
		}
	} else {
		resp, err = validateTPURayCluster(review)
		if err != nil {
			s.logf("TPU webhook: failed to validate RayCluster: %v", err)
			http.Error(w, "Failed to validate RayCluster", http.StatusForbidden)
			return
		}
	}
	review.Response = resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}
