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

# After maintenance: let the Ray workers back onto the slice.
#   terraform apply -invoke=action.raytpu_uncordon_slice.trillium
action "raytpu_uncordon_slice" "trillium" {
  config {
    slice = raytpu_slice.trillium.id
  }
}
