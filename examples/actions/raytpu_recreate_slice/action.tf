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

# Recreate the slice when a host of it failed:
#   terraform apply -invoke=action.raytpu_recreate_slice.trillium
action "raytpu_recreate_slice" "trillium" {
  config {
    slice             = raytpu_slice.trillium.id
    only_if_unhealthy = true
  }
}

# Or in an apply: bump repair to have the apply recreate the slice, if it is
# unhealthy, after it changed whatever else the configuration changes.
variable "repair" {
  type    = number
  default = 1
}

resource "terraform_data" "repair" {
  input = var.repair

  lifecycle {
    action_trigger {
      events  = [after_update]
      actions = [action.raytpu_recreate_slice.trillium]
    }
  }
}
