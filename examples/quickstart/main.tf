# Quickstart: a GKE cluster with managed KubeRay, two v6e 4x4 slices (16 chips, 4 hosts each) and
# one single-host v6e-4, and a RayCluster whose workers run on all three, plus a worker group whose
# v6e 2x4 slice GKE's node auto-provisioning creates for it.
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

  # Node auto-provisioning may create TPU slices for Ray workers, while the cluster holds at most
  # 48 v6e chips: the 36 of the slices below and one auto-provisioned v6e 2x4. GKE counts every
  # node against the cpu and memory limits, TPU hosts included: the eleven ct6e-standard-4t hosts of
  # those slices (180 vCPUs, 720 GB each) and the system pool's e2-standard-8 (8 vCPUs, 32 GB)
  # make 1988 cores and 7952 GB.
  auto_provisioning = {
    max_cpu       = 2048
    max_memory_gb = 8192
    tpu_limits    = [{ generation = "v6e", max_chips = 48 }]
  }
}

# Multislice: two identical slices, one replica each of one KubeRay worker group.
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
  accelerator_type = "v6e-4"
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
    # No raytpu_slice: the workers ask for a v6e 2x4 on two 4-chip hosts, and GKE's node
    # auto-provisioning creates that slice for them. (A single-host v6e-8 is labelled 2x4 too:
    # beside one, raytpu refuses this group, as nothing would keep its workers off it.)
    { name = "on-demand", generation = "v6e", topology = "2x4", chips_per_host = 4 },
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
    # By group: num_workers for Ray Train, slice_placement_group's arguments, and, for the
    # multislice group, the MEGASCALE_* settings its workers get.
    settings = raytpu_ray_cluster.quickstart.worker_group_settings
  }
}
