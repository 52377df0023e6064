package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// RayClusterGroup, RayClusterResource and RayClusterKind name KubeRay's RayCluster (rayclusters.ray.io).
const (
	RayClusterGroup    = "ray.io"
	RayClusterResource = "rayclusters"
	RayClusterKind     = "RayCluster"
)

// DryRunRayCluster asks the cluster's API server to create the RayCluster in manifest (one JSON or
// YAML document, apiVersion ray.io/<version>) as a server-side dry run, with strict field
// validation: it runs the CRD's schema, defaulting and admission (such as the Ray TPU webhook, on
// GKE) and stores nothing. A nil error means the API server would accept the object; otherwise
// the error carries the API server's message.
//
// namespace is where to try it; empty means the manifest's metadata.namespace, else "default".
// A manifest naming another namespace than a non-empty namespace is refused.
func (c *Client) DryRunRayCluster(ctx context.Context, namespace string, manifest []byte) error {
	raw, err := decodeManifest(manifest)
	if err != nil {
		return fmt.Errorf("kube: RayCluster manifest: %w", err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("kube: RayCluster manifest: not a Kubernetes object: %w", err)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || gv.Group != RayClusterGroup || gv.Version == "" || tm.Kind != RayClusterKind {
		return fmt.Errorf("kube: RayCluster manifest: apiVersion %q kind %q is not a KubeRay RayCluster (apiVersion ray.io/v1, kind RayCluster)",
			tm.APIVersion, tm.Kind)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("kube: RayCluster manifest: not a Kubernetes object: %w", err)
	}
	switch ns := obj.GetNamespace(); {
	case namespace == "" && ns == "":
		namespace = "default"
	case namespace == "":
		namespace = ns
	case ns != "" && ns != namespace:
		return fmt.Errorf("kube: RayCluster manifest: metadata.namespace is %q but the dry run is in namespace %q", ns, namespace)
	}
	obj.SetNamespace(namespace)
	name := obj.GetName()
	if name == "" {
		name = obj.GetGenerateName() + "*"
	}

	gvr := gv.WithResource(RayClusterResource)
	_, err = c.dynamic.Resource(gvr).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldValidation: metav1.FieldValidationStrict,
	})
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces" {
			return fmt.Errorf("kube: dry run of RayCluster %s/%s: namespace %q does not exist: %w", namespace, name, namespace, err)
		}
		return fmt.Errorf("kube: dry run of RayCluster %s/%s: the API server does not serve %s (is the Ray Operator add-on "+
			"enabled and are the KubeRay CRDs established?): %w", namespace, name, gvr.GroupResource().String()+"/"+gv.Version, err)
	}
	// Schema, strict field validation and admission webhooks answer 400, 403 or 422 with their
	// reason in the message; RBAC refusals (403) name the user and verb the same way.
	var status apierrors.APIStatus
	if errors.As(err, &status) && !apierrors.IsUnauthorized(err) {
		return fmt.Errorf("kube: the API server rejected RayCluster %s/%s (server-side dry run): %w", namespace, name, err)
	}
	return fmt.Errorf("kube: dry run of RayCluster %s/%s: %w", namespace, name, c.explain(err))
}

// decodeManifest reads exactly one document from JSON or YAML and returns it as JSON.
func decodeManifest(manifest []byte) (json.RawMessage, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var docs []json.RawMessage
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid JSON or YAML: %w", err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue // an empty YAML document
		}
		docs = append(docs, raw)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("it is empty")
	case 1:
		return docs[0], nil
	default:
		return nil, fmt.Errorf("it holds %d documents; give one RayCluster", len(docs))
	}
}
