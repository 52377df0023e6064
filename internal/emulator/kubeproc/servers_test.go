package kubeproc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// TestEtcdAndAPIServer starts etcd and a kube-apiserver on it, as the emulator does for a cluster,
// and stops them. Never a skip: without kube-apiserver and etcd (`make tools`) it fails.
func TestEtcdAndAPIServer(t *testing.T) {
	bins, err := FindBinaries("", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testwait.Context(t)
	dir := t.TempDir()
	g := NewGroup()
	defer g.StopAll(10 * time.Second)
	etcdDir := filepath.Join(dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		t.Fatal(err)
	}
	etcd, err := StartEtcd(ctx, g, bins.Etcd, filepath.Join(etcdDir, "data"), etcdDir)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		created, err := etcd.Create(ctx, "/test/key", []byte("value"))
		if err != nil || created != want {
			t.Fatalf("create %d: %v %v, want %v", i, created, err, want)
		}
	}
	if v, ok, err := etcd.Get(ctx, "/test/key"); err != nil || !ok || string(v) != "value" {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if _, ok, err := etcd.Get(ctx, "/test/none"); err != nil || ok {
		t.Fatalf("get of a missing key: %v %v", ok, err)
	}

	pki, err := NewPKI("test")
	if err != nil {
		t.Fatal(err)
	}
	clusterDir := filepath.Join(dir, "cluster")
	api, err := StartAPIServer(ctx, APIServerConfig{
		Procs: g, Bin: bins.APIServer, Dir: clusterDir, PKI: pki,
		EtcdURL: etcd.URL(), EtcdPrefix: "/raytpu/test", Token: "test-token",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.ready("test-token"); err != nil || api.Port() == 0 {
		t.Fatalf("kube-apiserver on port %d: %v", api.Port(), err)
	}
	loaded, err := LoadPKI(filepath.Join(clusterDir, "pki"))
	if err != nil || !bytes.Equal(loaded.CACertPEM, pki.CACertPEM) || !bytes.Equal(loaded.SAKeyPEM, pki.SAKeyPEM) {
		t.Fatalf("key material read back: %v", err)
	}
	if n := g.Running(); n != 2 {
		t.Fatalf("%d processes running, want etcd and kube-apiserver", n)
	}
	api.Stop()
	if n := g.Running(); n != 1 {
		t.Fatalf("%d processes running after the kube-apiserver stopped, want etcd alone", n)
	}
	g.StopAll(10 * time.Second)
	if n := g.Running(); n != 0 {
		t.Fatalf("%d processes running after StopAll", n)
	}
}
