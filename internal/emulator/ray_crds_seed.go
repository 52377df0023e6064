package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
)

// The KubeRay CRDs are large (about 3 MB of schema together), and a kube-apiserver spends about
// 8 CPU-seconds creating them and recording their status (managed fields of multi-megabyte
// objects, each update decoded, converted and encoded again): more than the rest of a cluster's
// start. The first cluster of an emulator gets them through its API, as GKE's add-on installs them;
// every later one gets a copy of that cluster's stored objects, written into its storage with their
// own identity and times, which its kube-apiserver then serves as it serves any stored CRD
// (INFERRED equivalent: the same objects, Established, as the add-on's install leaves them; their
// managed fields name the first cluster's managers).

// crdTemplates are the stored KubeRay CRDs of the first cluster that installed them, by name, as
// the kube-apiserver wrote them to etcd.
type crdTemplates struct {
	mu  sync.Mutex
	crd map[string][]byte
}

// crdKey is the etcd key of a CRD in a cluster's storage (kube-apiserver --etcd-prefix /raytpu/UID).
func crdKey(c *cluster, name string) string {
	return "/raytpu/" + c.UID + "/apiextensions.k8s.io/customresourcedefinitions/" + name
}

// captureRayCRDs keeps c's stored KubeRay CRDs as the templates, once.
func (e *Emulator) captureRayCRDs(ctx context.Context, c *cluster) {
	e.crdTemplates.mu.Lock()
	have := e.crdTemplates.crd != nil
	e.crdTemplates.mu.Unlock()
	if have {
		return
	}
	got := map[string][]byte{}
	for _, f := range kubeproc.KubeRayCRDFiles {
		name := crdNameOfFile(f)
		v, ok, err := e.etcd.Get(ctx, crdKey(c, name))
		if err != nil || !ok {
			return
		}
		got[name] = v
	}
	e.crdTemplates.mu.Lock()
	if e.crdTemplates.crd == nil {
		e.crdTemplates.crd = got
	}
	e.crdTemplates.mu.Unlock()
}

// seedRayCRDs writes the templates into c's storage, each with a new uid and the present time,
// unless a CRD of the name is there (one being deleted is waited for, as installRayCRDs does). It
// reports false when there are no templates yet.
func (e *Emulator) seedRayCRDs(ctx context.Context, c *cluster, current func() bool) (bool, error) {
	e.crdTemplates.mu.Lock()
	templates := e.crdTemplates.crd
	e.crdTemplates.mu.Unlock()
	if templates == nil {
		return false, nil
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for name, stored := range templates {
		obj, err := restampedCRD(stored, now)
		if err != nil {
			return true, fmt.Errorf("copying CRD %s: %w", name, err)
		}
		for {
			created, err := e.etcd.Create(ctx, crdKey(c, name), obj)
			if err != nil {
				return true, fmt.Errorf("writing CRD %s: %w", name, err)
			}
			if created {
				break
			}
			// There already: served, or being deleted by an add-on change a moment ago.
			_, dyn := c.clients()
			if dyn == nil {
				return true, errNoAPIServer
			}
			existing, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err == nil && existing.GetDeletionTimestamp() == nil {
				break
			}
			if err := pollStep(ctx, current); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// restampedCRD is a stored CRD with a new uid, and now as its creation, condition and
// managed-field times.
func restampedCRD(stored []byte, now string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(stored, &obj); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return nil, fmt.Errorf("no metadata")
	}
	meta["uid"] = string(uuid.NewUUID())
	meta["creationTimestamp"] = now
	// A live CRD: the deletion's finalizer (added by the API server's delete) is not copied.
	for _, k := range []string{"resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers"} {
		delete(meta, k)
	}
	if fields, ok := meta["managedFields"].([]any); ok {
		for _, f := range fields {
			if m, ok := f.(map[string]any); ok {
				m["time"] = now
			}
		}
	}
	if status, ok := obj["status"].(map[string]any); ok {
		if conds, ok := status["conditions"].([]any); ok {
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok {
					m["lastTransitionTime"] = now
				}
			}
		}
	}
	return json.Marshal(obj)
}

// crdNameOfFile is the CRD a KubeRay CRD file defines: ray.io_rayclusters.yaml, rayclusters.ray.io.
func crdNameOfFile(file string) string {
	group, rest, _ := strings.Cut(file, "_")
	return strings.TrimSuffix(rest, ".yaml") + "." + group
}
