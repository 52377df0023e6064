# A cluster where GKE creates TPU slices on demand: a RayCluster worker group that asks for a v6e
# 4x4 (node selector and google.com/tpu request) gets a node pool of that shape from node
# auto-provisioning, while the cluster holds at most 64 v6e chips (four 4x4 slices) and 16 v5p
# chips in all, its other node pools included.
resource "raytpu_cluster" "on_demand" {
  name               = "ray-tpu-on-demand"
  location           = "us-east5-b"
  min_master_version = "1.34"

  auto_provisioning = {
    # GKE requires cpu and memory limits, and counts every node of the cluster against them, TPU
    # hosts included: sixteen ct6e-standard-4t (180 vCPUs, 720 GB each), four ct5p-hightpu-4t (208
    # vCPUs, 448 GB) and the system pool's e2-standard-8 (8 vCPUs, 32 GB) make 3720 cores and
    # 13344 GB.
    max_cpu       = 4000
    max_memory_gb = 14000
    tpu_limits = [
      { generation = "v6e", max_chips = 64 },
      { generation = "v5p", max_chips = 16 },
    ]
    locations = ["us-east5-b"]

    # The identity of the pools it creates, instead of the Compute Engine default service account.
    service_account = "tpu-nodes@my-project.iam.gserviceaccount.com"
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
  }
}
