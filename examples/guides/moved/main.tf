terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# The TPU node pool was google_container_node_pool.trillium: its resource block is
# gone from the configuration, and the moved block hands its state to raytpu_slice.
# Terraform >= 1.8 or OpenTofu >= 1.12.4.
moved {
  from = google_container_node_pool.trillium
  to   = raytpu_slice.trillium
}

variable "cluster_id" {
  description = "The id of the cluster, such as google_container_cluster.ray.id."
  type        = string
}

resource "raytpu_slice" "trillium" {
  cluster    = var.cluster_id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
}

# The Ray Operator add-on of a cluster recorded by google_container_cluster.ray. The
# cluster itself leaves Terraform with the move: only the add-on stays managed.
moved {
  from = google_container_cluster.ray
  to   = raytpu_ray_operator.ray
}

resource "raytpu_ray_operator" "ray" {
  cluster = var.cluster_id
  logging = true
}
