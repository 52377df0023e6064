package emulator

import "github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"

// KubernetesVersion is the kube-apiserver version that tools/install-kube.sh builds (pinned in
// tools/kube/go.mod; a test keeps the two equal). It names the folder of the binaries.
const KubernetesVersion = kubeproc.KubernetesVersion

// Environment variables read by the emulator.
const (
	// EnvKubeBinDir overrides the folder holding kube-apiserver, etcd, kube-scheduler,
	// ray-operator and kuberay-crds/.
	EnvKubeBinDir = kubeproc.EnvBinDir
	// EnvToolsCache is the tools cache root shared with tools/install-*.sh.
	EnvToolsCache = kubeproc.EnvToolsCache
)

// DefaultKubeBinDir is where the emulator looks for its binaries: $RAYTPU_KUBE_BIN_DIR,
// else ${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}/kubernetes-<version>,
// the folder tools/install-kube.sh (make tools) fills.
func DefaultKubeBinDir() string { return kubeproc.DefaultBinDir() }
