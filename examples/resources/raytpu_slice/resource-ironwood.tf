# A multi-host Ironwood slice. GKE places it with a Compute Engine workload
# policy (HIGH_THROUGHPUT, accelerator topology 4x4x4): raytpu creates one for
# the slice and deletes it with the slice. Set placement_policy_name to use a
# policy of your own instead. The slice is replaced by the next plan if one of
# its hosts fails.
resource "raytpu_slice" "ironwood" {
  cluster           = raytpu_cluster.ray.id
  name              = "ironwood-4x4x4"
  generation        = "tpu7x"
  topology          = "4x4x4"
  node_version      = "1.34"
  replace_unhealthy = true
}
