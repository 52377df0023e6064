terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5-b"
  min_master_version = "1.34"
}

# Three identical slices: two run the multislice group, one waits as its spare.
# replace_unhealthy makes the next apply replace a slice with a failed host.
resource "raytpu_slice" "trillium" {
  count             = 3
  cluster           = raytpu_cluster.ray.id
  name              = "trillium-${count.index}"
  generation        = "v6e"
  topology          = "4x4"
  replace_unhealthy = true
}

resource "raytpu_ray_cluster" "train" {
  cluster_id = raytpu_cluster.ray.id
  name       = "train"
  worker_groups = [{
    name         = "multislice"
    slices       = slice(raytpu_slice.trillium[*].id, 0, 2)
    spare_slices = [raytpu_slice.trillium[2].id]
  }]
}

# multislice = { state = "Healthy", active = [...], spare = [...], failed = [] }
output "slices" {
  value = raytpu_ray_cluster.train.worker_group_slices
}
