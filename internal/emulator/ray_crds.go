package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// loadRayCRDs reads the KubeRay CRDs from the emulator's CRD folder.
func (e *Emulator) loadRayCRDs() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range kubeproc.KubeRayCRDFiles {
		b, err := os.ReadFile(filepath.Join(e.bins.CRDDir, f))
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// errNoAPIServer is the error of a CRD change on a cluster whose kube-apiserver is not running.
var errNoAPIServer = errors.New("the cluster's kube-apiserver is not running")

// rayCRDs returns the CRD API of the cluster's kube-apiserver and the KubeRay CRDs.
func (e *Emulator) rayCRDs(c *cluster) (dynamic.ResourceInterface, []*unstructured.Unstructured, error) {
	_, dyn := c.clients()
	if dyn == nil {
		return nil, nil, errNoAPIServer
	}
	crds, err := e.loadRayCRDs()
	if err != nil {
		return nil, nil, err
	}
	return dyn.Resource(crdGVR), crds, nil
}

// errSuperseded ends a CRD change that a newer add-on change replaced.
var errSuperseded = errors.New("superseded by a newer add-on change")

// installRayCRDs creates the KubeRay CRDs (what GKE's Ray Operator add-on installs). It gives up
// with errSuperseded once current reports a newer add-on change.
func (e *Emulator) installRayCRDs(ctx context.Context, c *cluster, current func() bool) error {
	if seeded, err := e.seedRayCRDs(ctx, c, current); seeded || err != nil {
		return err
	}
	api, crds, err := e.rayCRDs(c)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		for {
			_, err := api.Create(ctx, crd, metav1.CreateOptions{})
			if err == nil {
				break
			}
			if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating CRD %s: %w", crd.GetName(), err)
			}
			// A CRD removed a moment ago may still be terminating: wait for it to go, then create
			// it again, or the add-on would end up enabled without its CRDs.
			existing, err := api.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err == nil && existing.GetDeletionTimestamp() == nil {
				break
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("reading CRD %s: %w", crd.GetName(), err)
			}
			if err := pollStep(ctx, current); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitRayCRDsEstablished waits until the API server serves every KubeRay CRD (condition
// Established), or until current reports a newer add-on change (errSuperseded).
func (e *Emulator) waitRayCRDsEstablished(ctx context.Context, c *cluster, current func() bool) error {
	api, crds, err := e.rayCRDs(c)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		for {
			got, err := api.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("reading CRD %s: %w", crd.GetName(), err)
			}
			if err == nil && crdEstablished(got) {
				break
			}
			if err := pollStep(ctx, current); err != nil {
				return err
			}
		}
	}
	return nil
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, raw := range conditions {
		cond, _ := raw.(map[string]any)
		if cond["type"] == "Established" && cond["status"] == "True" {
			return true
		}
	}
	return false
}

// crdPollInterval spaces the reads of a CRD that is being deleted or established.
const crdPollInterval = 100 * time.Millisecond

// pollStep waits crdPollInterval, then says whether to go on polling: an error when ctx ended or
// a newer add-on change superseded this one.
func pollStep(ctx context.Context, current func() bool) error {
	if !sleepCtx(ctx, crdPollInterval) {
		return ctx.Err()
	}
	if !current() {
		return errSuperseded
	}
	return nil
}

// removeRayCRDs deletes the KubeRay CRDs (and with them every Ray object) and waits until they
// are gone, or until current reports a newer add-on change (errSuperseded).
func (e *Emulator) removeRayCRDs(ctx context.Context, c *cluster, current func() bool) error {
	api, crds, err := e.rayCRDs(c)
	if errors.Is(err, errNoAPIServer) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if !current() {
			return errSuperseded
		}
		err := api.Delete(ctx, crd.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting CRD %s: %w", crd.GetName(), err)
		}
	}
	// Removal is done when the CRDs are gone, not when their deletion starts.
	for _, crd := range crds {
		for {
			_, err := api.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				return fmt.Errorf("reading CRD %s: %w", crd.GetName(), err)
			}
			if err := pollStep(ctx, current); err != nil {
				return err
			}
		}
	}
	return nil
}
