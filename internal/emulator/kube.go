package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// KubernetesVersion is the kube-apiserver version that tools/install-kube.sh builds (pinned in
// tools/kube/go.mod; a test keeps the two equal). It names the folder of the binaries.
const KubernetesVersion = "v1.34.4"

// Environment variables read by the emulator.
const (
	// EnvKubeBinDir overrides the folder holding kube-apiserver, etcd, kube-scheduler,
	// ray-operator and kuberay-crds/.
	EnvKubeBinDir = "RAYTPU_KUBE_BIN_DIR"
	// EnvToolsCache is the tools cache root shared with tools/install-*.sh.
	EnvToolsCache = "RAYTPU_TOOLS_CACHE"
)

// DefaultKubeBinDir is where the emulator looks for its binaries: $RAYTPU_KUBE_BIN_DIR,
// else ${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}/kubernetes-<version>,
// the folder tools/install-kube.sh (make tools) fills.
func DefaultKubeBinDir() string {
	if d := os.Getenv(EnvKubeBinDir); d != "" {
		return d
	}
	cache := os.Getenv(EnvToolsCache)
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "raytpu", "tools")
	}
	return filepath.Join(cache, "kubernetes-"+KubernetesVersion)
}

// kubeBinaries are the resolved paths of the control-plane binaries and the KubeRay CRDs.
type kubeBinaries struct {
	APIServer string
	Etcd      string
	CRDDir    string
	// Scheduler and ControllerManager (kube-scheduler and kube-controller-manager of the same
	// Kubernetes) run for clusters with workloads (cluster_runtime.go), RayOperator (KubeRay's
	// ray-operator of the version in go.mod) for those with the Ray Operator add-on.
	Scheduler         string
	ControllerManager string
	RayOperator       string
}

// kubeRayCRDFiles are the CRDs GKE's Ray Operator add-on installs.
var kubeRayCRDFiles = []string{"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml"}

// findKubeBinaries checks that everything is in place and says how to fix it when it is not.
func findKubeBinaries(binDir, crdDir string) (*kubeBinaries, error) {
	if binDir == "" {
		binDir = DefaultKubeBinDir()
	}
	if crdDir == "" {
		crdDir = filepath.Join(binDir, "kuberay-crds")
	}
	b := &kubeBinaries{
		APIServer:         filepath.Join(binDir, "kube-apiserver"),
		Etcd:              filepath.Join(binDir, "etcd"),
		CRDDir:            crdDir,
		Scheduler:         filepath.Join(binDir, "kube-scheduler"),
		ControllerManager: filepath.Join(binDir, "kube-controller-manager"),
		RayOperator:       filepath.Join(binDir, "ray-operator"),
	}
	hint := fmt.Sprintf("run `make tools` (tools/install-kube.sh) to build them, or set %s to a folder that has them", EnvKubeBinDir)
	for _, bin := range []string{b.APIServer, b.Etcd} {
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("emulator: %s not found or not executable: %s", filepath.Base(bin), hint)
		}
	}
	for _, f := range kubeRayCRDFiles {
		if _, err := os.Stat(filepath.Join(crdDir, f)); err != nil {
			return nil, fmt.Errorf("emulator: KubeRay CRD %s not found in %s: %s", f, crdDir, hint)
		}
	}
	for _, bin := range []string{b.Scheduler, b.ControllerManager, b.RayOperator} {
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("emulator: %s not found or not executable: %s", filepath.Base(bin), hint)
		}
	}
	return b, nil
}

// etcdServer is the one etcd shared by every cluster of an emulator (each cluster has its own
// --etcd-prefix).
type etcdServer struct {
	proc      *process
	clientURL string
}

func startEtcd(ctx context.Context, procs *procGroup, bin, dataDir, logDir string) (*etcdServer, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		clientPort, err := freePort()
		if err != nil {
			return nil, err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, err
		}
		if peerPort == clientPort {
			continue
		}
		client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
		peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
		args := []string{
			"--name=raytpu", "--data-dir=" + dataDir,
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=raytpu=" + peer,
			"--unsafe-no-fsync", "--log-level=warn",
			"--quota-backend-bytes=4294967296",
		}
		p, err := procs.start("etcd", bin, args, filepath.Join(logDir, "etcd.log"))
		if err != nil {
			return nil, err
		}
		if err := waitHTTP(ctx, p, 30*time.Second, func() error { return etcdHealthy(client) }); err != nil {
			p.stop(5 * time.Second)
			lastErr = err
			continue
		}
		return &etcdServer{proc: p, clientURL: client}, nil
	}
	return nil, fmt.Errorf("emulator: etcd did not start: %w", lastErr)
}

func etcdHealthy(url string) error {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return err
	}
	if h.Health != "true" {
		return errNotReady
	}
	return nil
}

// waitHTTP polls check every 100 ms until it succeeds, the process exits or timeout passes.
func waitHTTP(ctx context.Context, p *process, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if p.exited() {
			return p.exitError()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v; last log lines:\n%s", p.name, timeout, err, p.logTail(15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// apiServer is one cluster's kube-apiserver.
type apiServer struct {
	proc *process
	port int
	ca   *x509.CertPool
}

type apiServerConfig struct {
	procs      *procGroup
	bin        string
	dir        string // pki/, tokens.csv and the log live here
	pki        *clusterPKI
	etcdURL    string
	etcdPrefix string
	token      string
	port       int // preferred port (a restarted cluster keeps its endpoint when it can); 0 = any
	extraArgs  []string
}

// startAPIServer starts a kube-apiserver serving HTTPS on 127.0.0.1 with the cluster's own CA and
// waits until /readyz answers ok.
func startAPIServer(ctx context.Context, cfg apiServerConfig) (*apiServer, error) {
	pkiDir := filepath.Join(cfg.dir, "pki")
	if err := cfg.pki.write(pkiDir); err != nil {
		return nil, err
	}
	tokens := filepath.Join(cfg.dir, "tokens.csv")
	// The emulator's bearer token is this cluster's admin, as GKE maps a Google token to a user
	// that is cluster-admin for the cluster's owner.
	if err := os.WriteFile(tokens, []byte(cfg.token+",admin,admin-uid,\"system:masters\"\n"), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.pki.CACertPEM) {
		return nil, errors.New("emulator: bad cluster CA")
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := cfg.port
		if port == 0 || attempt > 0 || !portFree(port) {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			port = p
		}
		args := []string{
			"--etcd-servers=" + cfg.etcdURL,
			"--etcd-prefix=" + cfg.etcdPrefix,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + filepath.Join(pkiDir, pkiServingFile),
			"--tls-private-key-file=" + filepath.Join(pkiDir, pkiServingKeyFile),
			"--cert-dir=" + filepath.Join(cfg.dir, "certs"),
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
		args = append(args, cfg.extraArgs...)
		p, err := cfg.procs.start("kube-apiserver", cfg.bin, args, filepath.Join(cfg.dir, "kube-apiserver.log"))
		if err != nil {
			return nil, err
		}
		s := &apiServer{proc: p, port: port, ca: pool}
		if err := waitHTTP(ctx, p, 90*time.Second, func() error { return s.ready(cfg.token) }); err != nil {
			p.stop(5 * time.Second)
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

func (s *apiServer) httpClient() *http.Client {
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.ca}},
	}
}

func (s *apiServer) ready(token string) error {
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

func (s *apiServer) stop() {
	if s != nil && s.proc != nil {
		s.proc.stop(10 * time.Second)
	}
}
