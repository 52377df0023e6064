package kube

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// validRayClusterYAML is a RayCluster with one v6e 4x4 slice as its TPU worker group (domain
// reference section 6).
const validRayClusterYAML = `
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: tpu-v6e-4x4
spec:
  rayVersion: "2.55.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.55.0-py310
          resources:
            limits: {cpu: "4", memory: 16Gi}
  workerGroupSpecs:
  - groupName: tpu-v6e-4x4
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    numOfHosts: 4
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.55.0-py310-tpu
          resources:
            limits: {google.com/tpu: "4"}
            requests: {google.com/tpu: "4"}
        nodeSelector:
          cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
          cloud.google.com/gke-tpu-topology: 4x4
        tolerations:
        - key: google.com/tpu
          operator: Exists
          effect: NoSchedule
`

func TestDryRunRayCluster(t *testing.T) {
	requireKubeRay(t)
	ctx := testwait.Context(t)
	c := env.client

	t.Run("accepted as YAML", func(t *testing.T) {
		if err := c.DryRunRayCluster(ctx, "", []byte(validRayClusterYAML)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("accepted as JSON", func(t *testing.T) {
		j, err := yaml.YAMLToJSON([]byte(validRayClusterYAML))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.DryRunRayCluster(ctx, "default", j); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nothing is stored", func(t *testing.T) {
		gvr := schema.GroupVersionResource{Group: RayClusterGroup, Version: "v1", Resource: RayClusterResource}
		list, err := c.dynamic.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("a dry run stored %d RayClusters", len(list.Items))
		}
	})

	// Rejections carry the API server's own message.
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{
			name: "replicas is not a number", from: "replicas: 1", to: `replicas: "three"`,
			want: []string{`the API server rejected RayCluster default/tpu-v6e-4x4 (server-side dry run)`,
				`spec.workerGroupSpecs[0].replicas`, `must be of type integer`},
		},
		{
			name: "unknown field (strict validation)", from: "numOfHosts: 4", to: "numHosts: 4",
			want: []string{`unknown field "spec.workerGroupSpecs[0].numHosts"`},
		},
		{
			name: "container without a name", from: "- name: ray-worker\n          image", to: "- image",
			want: []string{`spec.workerGroupSpecs[0].template.spec.containers[0].name`, `Required value`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest := strings.Replace(validRayClusterYAML, tc.from, tc.to, 1)
			if manifest == validRayClusterYAML {
				t.Fatalf("%q is not in the manifest", tc.from)
			}
			err := c.DryRunRayCluster(ctx, "", []byte(manifest))
			if err == nil {
				t.Fatal("the API server accepted it")
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Errorf("error %q does not carry the API server's status", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}

	t.Run("namespace that does not exist", func(t *testing.T) {
		err := c.DryRunRayCluster(ctx, "no-such-namespace", []byte(validRayClusterYAML))
		if err == nil || !strings.Contains(err.Error(), `namespace "no-such-namespace" does not exist`) {
			t.Errorf("error = %v", err)
		}
	})

	// Refused before anything is sent.
	for _, tc := range []struct {
		name, namespace, manifest, want string
	}{
		{name: "empty", manifest: "\n---\n", want: "it is empty"},
		{name: "two documents", manifest: validRayClusterYAML + "\n---\n" + validRayClusterYAML, want: "holds 2 documents"},
		{name: "not YAML", manifest: "{nope", want: "not valid JSON or YAML"},
		{name: "another kind", manifest: strings.Replace(validRayClusterYAML, "kind: RayCluster", "kind: RayJob", 1), want: `kind "RayJob" is not a KubeRay RayCluster`},
		{name: "no kind", manifest: strings.Replace(validRayClusterYAML, "kind: RayCluster", "", 1), want: `apiVersion "ray.io/v1" kind "" is not a KubeRay RayCluster`},
		{name: "not an object", manifest: "- a\n- b\n", want: "not a Kubernetes object"},
		{name: "another group", manifest: strings.Replace(validRayClusterYAML, "ray.io/v1", "apps/v1", 1), want: `apiVersion "apps/v1"`},
		{
			name: "namespace mismatch", namespace: "team-a",
			manifest: strings.Replace(validRayClusterYAML, "name: tpu-v6e-4x4\n", "name: tpu-v6e-4x4\n  namespace: team-b\n", 1),
			want:     `metadata.namespace is "team-b" but the dry run is in namespace "team-a"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.DryRunRayCluster(ctx, tc.namespace, []byte(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
