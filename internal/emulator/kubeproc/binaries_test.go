package kubeproc

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The folder the emulator looks in is named after the version tools/kube pins.
func TestKubernetesVersionMatchesToolsModule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "tools", "kube", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^(?:require)?\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(b)
	if m == nil || string(m[1]) != KubernetesVersion {
		t.Fatalf("tools/kube/go.mod pins k8s.io/kubernetes %s, KubernetesVersion is %s", m, KubernetesVersion)
	}
}

func TestDefaultBinDir(t *testing.T) {
	t.Setenv(EnvBinDir, "")
	t.Setenv(EnvToolsCache, "/cache")
	if got := DefaultBinDir(); got != "/cache/kubernetes-"+KubernetesVersion {
		t.Fatalf("with %s: %s", EnvToolsCache, got)
	}
	t.Setenv(EnvToolsCache, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got := DefaultBinDir(); got != "/xdg/raytpu/tools/kubernetes-"+KubernetesVersion {
		t.Fatalf("with XDG_CACHE_HOME: %s", got)
	}
	t.Setenv(EnvBinDir, "/bins")
	if got := DefaultBinDir(); got != "/bins" {
		t.Fatalf("with %s: %s", EnvBinDir, got)
	}
}
