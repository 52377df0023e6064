terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

variable "project" {
  type = string
}

provider "raytpu" {
  project  = var.project
  location = "us-east5-b"
}

# A GKE cluster with GKE-managed KubeRay, returned once the KubeRay CRDs serve.
resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  release_channel    = "RAPID"
  min_master_version = "1.34"
}

# One TPU slice: a node pool of four ct6e-standard-4t hosts (16 v6e chips),
# checked at plan time and created whole or not at all.
resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
}

# Everything Ray and KubeRay need, known at plan time.
output "node_selector" {
  value = raytpu_slice.trillium.node_selector
}

output "num_of_hosts" {
  value = raytpu_slice.trillium.num_hosts # 4
}

output "tpu_resource" {
  value = raytpu_slice.trillium.tpu_resource # { "google.com/tpu" = "4" }
}

output "ray" {
  value = raytpu_slice.trillium.ray # names such as head_resource = "TPU-v6e-16-head"
}

output "slice_placement_group" {
  value = raytpu_slice.trillium.slice_placement_group
}

output "kuberay_worker_group" {
  value = jsondecode(raytpu_slice.trillium.kuberay_worker_group)
}
