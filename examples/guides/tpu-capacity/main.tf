# TPU capacity for a Ray platform: a reserved training slice that falls back to
# Spot and then to another zone, an elastic slice for interactive work, a
# flex-start slice for experiments, and a queue for batch jobs.

resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5" # regional: slices may use any of its zones
  min_master_version = "1.34"
}

# Training: the team's reservation first; when it is full, Spot in the same
# zone, then on-demand in another zone.
resource "raytpu_slice" "training" {
  cluster    = raytpu_cluster.ray.id
  name       = "training"
  generation = "v6e"
  topology   = "8x8"
  zone       = "us-east5-b"

  reservation = {
    name    = "trillium-training"
    project = "capacity-host-project" # shared with this project
  }

  fallback = [
    { capacity = "spot" },
    { zone = "us-east5-a", capacity = "on-demand" },
  ]
}

# Interactive work: scales between no hosts and all 4 with Ray's autoscaler.
resource "raytpu_slice" "interactive" {
  cluster     = raytpu_cluster.ray.id
  name        = "interactive"
  generation  = "v6e"
  topology    = "4x4"
  zone        = "us-east5-b"
  autoscaling = true
}

# Experiments: flex-start capacity, up to a day at a time.
resource "raytpu_slice" "experiments" {
  cluster          = raytpu_cluster.ray.id
  name             = "experiments"
  generation       = "v6e"
  topology         = "4x4"
  zone             = "us-east5-a"
  flex_start       = true
  max_run_duration = "24h"
}

# Batch jobs admitted by Kueue through ProvisioningRequests.
resource "raytpu_slice" "batch" {
  cluster             = raytpu_cluster.ray.id
  name                = "batch"
  generation          = "v6e"
  topology            = "8x8"
  zone                = "us-east5-b"
  queued_provisioning = true
}

output "training_capacity" {
  description = "Where the training slice came up: zone, type, reservation and attempt."
  value       = raytpu_slice.training.capacity_used
}
