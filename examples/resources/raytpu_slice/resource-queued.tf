# Queued provisioning (Dynamic Workload Scheduler): the node pool is created
# empty and its hosts arrive through ProvisioningRequests.
resource "raytpu_slice" "queued" {
  cluster             = raytpu_cluster.ray.id
  name                = "trillium-8x8"
  generation          = "v6e"
  topology            = "8x8"
  queued_provisioning = true
}
