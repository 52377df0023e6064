# Quickstart: a GKE cluster with managed KubeRay, two v6e 4x4 slices (16 chips, 4 hosts each) and
# one single-host v6e slice, and a RayCluster whose workers run on all three.
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
}

# Created once every Ray Pod runs, each replica on the hosts of one whole slice.
resource "raytpu_ray_cluster" "quickstart" {
  cluster_id = raytpu_cluster.ray.id
  name       = "tpu-quickstart"

  head = {
    cpu    = "2"
    memory = "8Gi"
  }

  worker_groups = [
    # Multislice: one replica of four hosts per 4x4 slice.
    { name = "multislice", slices = raytpu_slice.trillium[*].id },
    { name = "single-host", slices = [raytpu_slice.single_host.id] },
  ]
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

output "ray_cluster" {
  description = "The RayCluster: its state, its addresses and which worker runs on which host of which slice."
  value = {
    name      = raytpu_ray_cluster.quickstart.name
    namespace = raytpu_ray_cluster.quickstart.namespace
    status    = raytpu_ray_cluster.quickstart.status
    healthy   = raytpu_ray_cluster.quickstart.healthy
    dashboard = raytpu_ray_cluster.quickstart.dashboard_address
    placement = raytpu_ray_cluster.quickstart.placement
  }
}
