package kubeproc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// APIServer is one cluster's kube-apiserver.
type APIServer struct {
	proc *Process
	port int
	ca   *x509.CertPool
}

// APIServerConfig is what a cluster's kube-apiserver is started with.
type APIServerConfig struct {
	Procs      *Group
	Bin        string
	Dir        string // pki/, tokens.csv and the log live here
	PKI        *PKI
	EtcdURL    string
	EtcdPrefix string
	Token      string
	Port       int // preferred port (a restarted cluster keeps its endpoint when it can); 0 = any
	ExtraArgs  []string
	// EgressSocket, when set, is the Unix socket of an HTTP CONNECT proxy through which the
	// kube-apiserver reaches the cluster's Pods, Services and nodes: its "cluster" egress, as
	// GKE's control plane reaches them through Konnectivity (kubernetes.io/docs/tasks/
	// extend-kubernetes/setup-konnectivity: an EgressSelectorConfiguration whose cluster
	// connection is HTTPConnect over a UDS; over TCP the apiserver insists on TLS client
	// certificates). Its proxy to Services and Pods goes there.
	EgressSocket string
}

// StartAPIServer starts a kube-apiserver serving HTTPS on 127.0.0.1 with the cluster's own CA and
// waits until /readyz answers ok.
func StartAPIServer(ctx context.Context, cfg APIServerConfig) (*APIServer, error) {
	pkiDir := filepath.Join(cfg.Dir, "pki")
	if err := cfg.PKI.write(pkiDir); err != nil {
		return nil, err
	}
	tokens := filepath.Join(cfg.Dir, "tokens.csv")
	// The emulator's bearer token is this cluster's admin, as GKE maps a Google token to a user
	// that is cluster-admin for the cluster's owner.
	if err := os.WriteFile(tokens, []byte(cfg.Token+",admin,admin-uid,\"system:masters\"\n"), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.PKI.CACertPEM) {
		return nil, errors.New("emulator: bad cluster CA")
	}
	var egress []string
	if cfg.EgressSocket != "" {
		file := filepath.Join(cfg.Dir, "egress-selector.yaml")
		config := "apiVersion: apiserver.k8s.io/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n" +
			"- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport:\n      uds:\n        udsName: " + cfg.EgressSocket + "\n"
		if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
			return nil, err
		}
		egress = []string{"--egress-selector-config-file=" + file}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := cfg.Port
		if port == 0 || attempt > 0 || !portFree(port) {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			port = p
		}
		args := []string{
			"--etcd-servers=" + cfg.EtcdURL,
			"--etcd-prefix=" + cfg.EtcdPrefix,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + filepath.Join(pkiDir, pkiServingFile),
			"--tls-private-key-file=" + filepath.Join(pkiDir, pkiServingKeyFile),
			"--cert-dir=" + filepath.Join(cfg.Dir, "certs"),
			"--token-auth-file=" + tokens,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + filepath.Join(pkiDir, pkiSAPubFile),
			"--service-account-signing-key-file=" + filepath.Join(pkiDir, pkiSAKeyFile),
			"--service-cluster-ip-range=10.0.0.0/24",
			// GKE runs ExtendedResourceToleration: "Kubernetes Engine automatically applies the
			// corresponding tolerations to Pods requesting GPUs by running the
			// ExtendedResourceToleration admission controller" (GKE "GPUs", its taint-and-toleration
			// section); the plugin does so for every extended resource a Pod requests, google.com/tpu
			// included (kubernetes#55839: "a toleration with key example.com/device, operator Exists
			// and effect NoSchedule"). KubeRay's TPU samples carry no toleration and rely on it.
			"--enable-admission-plugins=ExtendedResourceToleration",
			// The default ServiceAccount of a namespace and the lifting of the not-ready taint that
			// TaintNodesByCondition puts on every new node are kube-controller-manager's work, which
			// runs only when a cluster needs it (controller_manager.go); without them these two
			// plugins would hold every Pod and node back (envtest disables ServiceAccount too). The
			// emulator sets node conditions and taints itself.
			"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
			// 127.0.0.1 cannot be the kubernetes Service endpoint; nothing needs it here.
			"--endpoint-reconciler-type=none",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
			// Memory: the watch cache holds a copy of every object; without it an apiserver with
			// the KubeRay CRDs takes about half the memory and starts as fast (~2.2 s).
			"--watch-cache=false",
		}
		args = append(append(args, egress...), cfg.ExtraArgs...)
		p, err := cfg.Procs.Start("kube-apiserver", cfg.Bin, args, nil, filepath.Join(cfg.Dir, "kube-apiserver.log"))
		if err != nil {
			return nil, err
		}
		s := &APIServer{proc: p, port: port, ca: pool}
		if err := waitHTTP(ctx, p, 90*time.Second, func() error { return s.ready(cfg.Token) }); err != nil {
			p.Stop(5 * time.Second)
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return s, nil
	}
	return nil, fmt.Errorf("emulator: kube-apiserver did not start: %w", lastErr)
}

// Port is the port the kube-apiserver serves on 127.0.0.1.
func (s *APIServer) Port() int { return s.port }

func (s *APIServer) httpClient() *http.Client {
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.ca}},
	}
}

func (s *APIServer) ready(token string) error {
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/readyz", s.port), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	c := s.httpClient()
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		return fmt.Errorf("readyz: %d %s", resp.StatusCode, body)
	}
	return nil
}

// Stop stops the kube-apiserver and waits for it; it does nothing on a nil APIServer.
func (s *APIServer) Stop() {
	if s != nil && s.proc != nil {
		s.proc.Stop(10 * time.Second)
	}
}
