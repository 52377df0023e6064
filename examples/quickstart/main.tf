# Quickstart: a GKE cluster with managed KubeRay, two v6e 4x4 slices (16 chips, 4 hosts each) and
# one single-host v6e slice, and a RayCluster that uses all three.
#
# `make demo` applies it against the local GKE emulator. Against Google Cloud, set project and
# location (a zone that offers TPU v6e) and authenticate as for any Google provider.

provider "raytpu" {
  project  = var.project
  location = var.location
}

variable "project" {
  description = "Project of the cluster."
  type        = string
  default     = "raytpu-quickstart"
}

variable "location" {
  description = "Zone of the cluster and its slices."
  type        = string
  default     = "us-east5-b"
}

resource "raytpu_cluster" "ray" {
  name                = "ray-quickstart"
  deletion_protection = false
}

# Multislice: two identical slices, one KubeRay worker group each.
resource "raytpu_slice" "trillium" {
  count      = 2
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-${count.index}"
  generation = "v6e"
  topology   = "4x4"
}

resource "raytpu_slice" "single_host" {
  cluster          = raytpu_cluster.ray.id
  name             = "trillium-single"
  accelerator_type = "v6e-8"
}

locals {
  slices = concat(raytpu_slice.trillium, [raytpu_slice.single_host])

  ray_cluster = {
    apiVersion = "ray.io/v1"
    kind       = "RayCluster"
    metadata   = { name = "tpu-quickstart", namespace = "default" }
    spec = {
      rayVersion = "2.55.0"
      headGroupSpec = {
        rayStartParams = {}
        template = {
          spec = {
            nodeSelector = { "cloud.google.com/gke-nodepool" = "system" }
            containers = [{
              name      = "ray-head"
              image     = "rayproject/ray:2.55.0-py310"
              resources = { requests = { cpu = "2", memory = "8Gi" } }
            }]
          }
        }
      }
      workerGroupSpecs = [for s in local.slices : jsondecode(s.kuberay_worker_group)]
    }
  }
}

output "cluster" {
  description = "How to reach the cluster's Kubernetes API."
  value = {
    id             = raytpu_cluster.ray.id
    endpoint       = raytpu_cluster.ray.endpoint
    ca_certificate = raytpu_cluster.ray.ca_certificate
    kuberay_ready  = raytpu_cluster.ray.kuberay.ready
  }
}

output "slices" {
  description = "Each slice as Ray and KubeRay see it."
  value = {
    for s in local.slices : s.name => {
      accelerator_type      = s.accelerator_type
      machine_type          = s.machine_type
      num_hosts             = s.num_hosts
      hosts                 = s.hosts
      healthy               = s.healthy
      node_selector         = s.node_selector
      slice_placement_group = s.slice_placement_group
    }
  }
}

output "ray_cluster_manifest" {
  description = "A RayCluster with a head group and one TPU worker group per slice, as JSON."
  value       = jsonencode(local.ray_cluster)
}
