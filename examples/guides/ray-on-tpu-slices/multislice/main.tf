terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

variable "slices" {
  type    = number
  default = 2

  validation {
    condition     = var.slices >= 1
    error_message = "A multislice job needs at least one slice."
  }
}

resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  min_master_version = "1.34"
}

# Identical slices, one node pool each. The node label gathers them for the
# worker group below.
resource "raytpu_slice" "train" {
  count      = var.slices
  cluster    = raytpu_cluster.ray.id
  name       = "train-${count.index}"
  generation = "v5p"
  topology   = "4x4x4"

  labels = {
    "multislice" = "train"
  }
}

locals {
  first = raytpu_slice.train[0]
  group = jsondecode(local.first.kuberay_worker_group)

  # One worker group with one replica per slice. Its node selector drops the
  # node pool of the first slice and selects the shared label instead; the Ray
  # TPU webhook keeps each replica on a single node pool.
  multislice_group = merge(local.group, {
    groupName   = "train"
    replicas    = var.slices
    minReplicas = var.slices
    maxReplicas = var.slices
    template = merge(local.group.template, {
      spec = merge(local.group.template.spec, {
        nodeSelector = merge(
          { for k, v in local.first.node_selector : k => v if k != "cloud.google.com/gke-nodepool" },
          { "multislice" = "train" },
        )
        containers = [for c in local.group.template.spec.containers : merge(c, {
          # With MEGASCALE_NUM_SLICES set, the webhook adds MEGASCALE_SLICE_ID
          # and MEGASCALE_COORDINATOR_ADDRESS to every host.
          env = [{ name = "MEGASCALE_NUM_SLICES", value = tostring(var.slices) }]
        })]
      })
    })
  })
}

output "worker_group" {
  value = local.multislice_group
}

# ray.util.tpu.slice_placement_group(**...) reserves every slice at once.
output "slice_placement_group" {
  value = merge(local.first.slice_placement_group, { num_slices = var.slices })
}

# Ray Train: one worker per host of every slice.
output "scaling_config" {
  value = {
    use_tpu          = true
    num_workers      = local.first.num_hosts * var.slices
    topology         = local.first.slice_placement_group.topology
    accelerator_type = local.first.ray.accelerator_type
  }
}
