package clusterkube

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// A runtime without workloads or Ray objects starts nothing, arms and disarms its Ray part, and
// once stopped arms nothing more: what the emulator relies on when the add-on toggles while the
// kube-apiserver restarts. It needs no Kubernetes binaries, as nothing starts a process.
func TestRuntimeArmsAndStops(t *testing.T) {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, gvr := range rayGVRs {
		listKinds[gvr] = "List"
	}
	r := New(context.Background(), Config{
		Name: "test",
		Dir:  t.TempDir(),
		Kube: fake.NewClientset(),
		Dyn:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds),
		Logf: t.Logf,
	})
	if got := r.Running(); len(got) != 0 {
		t.Fatalf("running before any workload: %v", got)
	}
	r.ArmRay()
	r.ArmRay()
	if !r.RayArmed() {
		t.Fatal("not armed after ArmRay")
	}
	r.DisarmRay()
	if r.RayArmed() {
		t.Fatal("armed after DisarmRay")
	}
	r.ArmRay()
	r.Stop()
	r.DisarmRay()
	r.ArmRay()
	if r.RayArmed() {
		t.Fatal("armed after Stop")
	}
	if got := r.Running(); len(got) != 0 {
		t.Fatalf("running after Stop: %v", got)
	}
}
