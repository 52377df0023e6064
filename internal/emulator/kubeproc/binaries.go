package kubeproc

import (
	"fmt"
	"os"
	"path/filepath"
)

// KubernetesVersion is the kube-apiserver version that tools/install-kube.sh builds (pinned in
// tools/kube/go.mod; a test keeps the two equal). It names the folder of the binaries.
const KubernetesVersion = "v1.34.4"

// Environment variables read by the emulator.
const (
	// EnvBinDir overrides the folder holding kube-apiserver, etcd, kube-scheduler,
	// ray-operator and kuberay-crds/.
	EnvBinDir = "RAYTPU_KUBE_BIN_DIR"
	// EnvToolsCache is the tools cache root shared with tools/install-*.sh.
	EnvToolsCache = "RAYTPU_TOOLS_CACHE"
)

// DefaultBinDir is where the emulator looks for its binaries: $RAYTPU_KUBE_BIN_DIR,
// else ${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}/kubernetes-<version>,
// the folder tools/install-kube.sh (make tools) fills.
func DefaultBinDir() string {
	if d := os.Getenv(EnvBinDir); d != "" {
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

// Binaries are the resolved paths of the control-plane binaries and the KubeRay CRDs.
type Binaries struct {
	APIServer string
	Etcd      string
	CRDDir    string
	// Scheduler and ControllerManager (kube-scheduler and kube-controller-manager of the same
	// Kubernetes) run for clusters with workloads (package clusterkube), RayOperator
	// (KubeRay's ray-operator of the version in go.mod) for those with the Ray Operator add-on.
	Scheduler         string
	ControllerManager string
	RayOperator       string
}

// KubeRayCRDFiles are the CRDs GKE's Ray Operator add-on installs.
var KubeRayCRDFiles = []string{"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml"}

// FindBinaries checks that everything is in place and says how to fix it when it is not.
func FindBinaries(binDir, crdDir string) (*Binaries, error) {
	if binDir == "" {
		binDir = DefaultBinDir()
	}
	if crdDir == "" {
		crdDir = filepath.Join(binDir, "kuberay-crds")
	}
	b := &Binaries{
		APIServer:         filepath.Join(binDir, "kube-apiserver"),
		Etcd:              filepath.Join(binDir, "etcd"),
		CRDDir:            crdDir,
		Scheduler:         filepath.Join(binDir, "kube-scheduler"),
		ControllerManager: filepath.Join(binDir, "kube-controller-manager"),
		RayOperator:       filepath.Join(binDir, "ray-operator"),
	}
	hint := fmt.Sprintf("run `make tools` (tools/install-kube.sh) to build them, or set %s to a folder that has them", EnvBinDir)
	for _, bin := range []string{b.APIServer, b.Etcd} {
		st, err := os.Stat(bin)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("emulator: %s not found or not executable: %s", filepath.Base(bin), hint)
		}
	}
	for _, f := range KubeRayCRDFiles {
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
