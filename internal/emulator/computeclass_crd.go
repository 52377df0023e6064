package emulator

import (
	"context"
	_ "embed"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

//go:embed computeclass_crd.yaml
var computeClassCRD []byte

// installComputeClassCRD serves ComputeClass in a cluster's kube-apiserver, as every GKE cluster
// of a version with custom ComputeClasses does. A cluster of an older version serves it too, and
// node auto-provisioning ignores its classes there (nodeagent). One already there, from an
// earlier start on the same etcd, is kept.
func installComputeClassCRD(ctx context.Context, dyn dynamic.Interface) error {
	j, err := yaml.YAMLToJSON(computeClassCRD)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		return err
	}
	_, err = dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
