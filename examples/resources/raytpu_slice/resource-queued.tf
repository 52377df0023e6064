# Queued provisioning (Dynamic Workload Scheduler): the node pool is created
# empty, as flex-start capacity, and its hosts arrive together through
# ProvisioningRequests, for example from Kueue. They run for at most 3 days.
resource "raytpu_slice" "queued" {
  cluster             = raytpu_cluster.ray.id
  name                = "trillium-8x8"
  generation          = "v6e"
  topology            = "8x8"
  queued_provisioning = true
  max_run_duration    = "72h"
}
