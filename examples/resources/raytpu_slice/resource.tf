resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5-b" # a zone that offers the TPU generations below
  min_master_version = "1.34"
}

# A v6e slice of 16 chips: one node pool of four ct6e-standard-4t hosts.
resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"

  # The Ray TPU image of ray.image and kuberay_worker_group:
  # rayproject/ray:2.55.0-py310-tpu.
  ray_version    = "2.55.0"
  python_version = "3.10"

  labels = {
    team = "ml-platform"
  }
}

output "trillium" {
  value = {
    num_hosts             = raytpu_slice.trillium.num_hosts         # 4
    tpu_resource          = raytpu_slice.trillium.tpu_resource      # { "google.com/tpu" = "4" }
    ray_head_resource     = raytpu_slice.trillium.ray.head_resource # "TPU-v6e-16-head"
    node_selector         = raytpu_slice.trillium.node_selector
    slice_placement_group = raytpu_slice.trillium.slice_placement_group
  }
}
