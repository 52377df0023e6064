variable "cluster_id" {
  type    = string
  default = "projects/my-project/locations/us-east5-b/clusters/ray-tpu"
}

resource "raytpu_slice" "trillium" {
  cluster    = var.cluster_id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
}

# Before maintenance: cordon the slice's hosts and evict its Ray workers.
#   terraform apply -invoke=action.raytpu_drain_slice.trillium
action "raytpu_drain_slice" "trillium" {
  config {
    slice   = raytpu_slice.trillium.id
    timeout = "20m"
  }
}
