# A multi-host Ironwood slice, placed by a Compute Engine workload policy
# (HIGH_THROUGHPUT, accelerator topology 4x4x4) created beforehand, and replaced
# by the next plan if one of its hosts fails.
resource "raytpu_slice" "ironwood" {
  cluster               = raytpu_cluster.ray.id
  name                  = "ironwood-4x4x4"
  generation            = "tpu7x"
  topology              = "4x4x4"
  node_version          = "1.34"
  placement_policy_name = "ironwood-4x4x4"
  replace_unhealthy     = true
}
