package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// testAccRayPodsConfig is a cluster with one single-host v6e 2x2 slice, and a RayCluster whose head
// and group carry the Pod settings of a real workload.
func testAccRayPodsConfig(cluster, env string) string {
	return testAccSliceConfig(cluster, v6eSlice("one", "2x2", "")+fmt.Sprintf(`
resource "raytpu_ray_cluster" "tpu" {
  cluster_id = raytpu_cluster.test.id
  name       = "pods"
  head = {
    service_account_name = "ray-jobs"
    labels               = { team = "ml" }
  }
  worker_groups = [{
    name                 = "one"
    slices               = [raytpu_slice.one.id]
    image                = "us-docker.pkg.dev/p/ray/ray:2.55.0-tpu"
    env                  = %s
    service_account_name = "ray-jobs"
    labels               = { team = "ml" }
    annotations          = { "gke-gcsfuse/volumes" = "true" }
    node_selector        = { "kubernetes.io/os" = "linux" }
    volumes = [
      { name = "shm", mount_path = "/dev/shm", empty_dir = { medium = "Memory", size_limit = "16Gi" } },
      { name = "data", mount_path = "/data", read_only = true, csi = { driver = "gcsfuse.csi.storage.gke.io", volume_attributes = { bucketName = "datasets" } } },
    ]
  }]
}
`, env))
}

// What real workers need reaches their Pods: environment, the ServiceAccount Workload Identity
// maps to a Google service account, labels, annotations, volumes, an extra node selector and an
// image of their own; a ServiceAccount that does not exist fails before anything is applied.
func TestAccRayCluster_podSettingsReachThePods(t *testing.T) {
	t.Parallel()
	cluster := "acc-ray-pods"
	config := testAccRayPodsConfig(cluster, `{ JAX_PLATFORMS = "tpu", XLA_FLAGS = "--xla_dump_to=/tmp" }`)
	accTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      testAccRayPodsConfig(cluster, `{ TPU_WORKER_ID = "0" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)env "TPU_WORKER_ID" is set by GKE's TPU webhook`),
			},
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Service Account Not Found.*service_account_name "ray-jobs": namespace default has no such`),
			},
			{
				PreConfig: func() { createServiceAccountOutOfBand(t, cluster, "ray-jobs") },
				Config:    config,
				Check: func(*terraform.State) error {
					workers := rayPodsOf(t, cluster, "pods", "one")
					head := rayPodsOf(t, cluster, "pods", "")
					if len(workers) != 1 || len(head) != 1 {
						return fmt.Errorf("%d workers and %d heads, want 1 and 1", len(workers), len(head))
					}
					w, h := workers[0], head[0]
					c := w.Spec.Containers[0]
					mounts := map[string]bool{}
					for _, m := range c.VolumeMounts {
						mounts[fmt.Sprintf("%s:%s:%v", m.Name, m.MountPath, m.ReadOnly)] = true
					}
					volumes := map[string]bool{}
					for _, v := range w.Spec.Volumes {
						switch {
						case v.EmptyDir != nil:
							volumes[fmt.Sprintf("%s:emptyDir:%s:%s", v.Name, v.EmptyDir.Medium, v.EmptyDir.SizeLimit)] = true
						case v.CSI != nil:
							volumes[fmt.Sprintf("%s:csi:%s:%s", v.Name, v.CSI.Driver, v.CSI.VolumeAttributes["bucketName"])] = true
						}
					}
					for what, ok := range map[string]bool{
						"worker env JAX_PLATFORMS":     envOf(w, "JAX_PLATFORMS") == "tpu",
						"worker env XLA_FLAGS":         envOf(w, "XLA_FLAGS") == "--xla_dump_to=/tmp",
						"worker service account":       w.Spec.ServiceAccountName == "ray-jobs",
						"head service account":         h.Spec.ServiceAccountName == "ray-jobs",
						"worker label":                 w.Labels["team"] == "ml",
						"head label":                   h.Labels["team"] == "ml",
						"worker annotation":            w.Annotations["gke-gcsfuse/volumes"] == "true",
						"worker node selector":         w.Spec.NodeSelector["kubernetes.io/os"] == "linux",
						"worker image":                 c.Image == "us-docker.pkg.dev/p/ray/ray:2.55.0-tpu",
						"head image":                   h.Spec.Containers[0].Image == "rayproject/ray:2.55.0-py310-tpu",
						"the webhook's TPU_WORKER_ID":  envOf(w, "TPU_WORKER_ID") == "0",
						"/dev/shm in memory":           volumes["shm:emptyDir:Memory:16Gi"] && mounts["shm:/dev/shm:false"],
						"the bucket mounted read-only": volumes["data:csi:gcsfuse.csi.storage.gke.io:datasets"] && mounts["data:/data:true"],
						"the worker on its slice":      w.Spec.NodeName != "",
					} {
						if !ok {
							return fmt.Errorf("%s: not as configured; worker Pod %s: %+v", what, w.Name, w.Spec)
						}
					}
					return nil
				},
			},
			{
				// The settings come back from the RayCluster's configuration annotation.
				ResourceName:            rayClusterAddress,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("projects/%s/locations/%s/clusters/%s/default/pods", testProject, testLocation, cluster),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}
