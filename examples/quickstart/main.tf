# Quickstart: what raytpu derives for a few TPU slices, with no cloud account.
terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

provider "raytpu" {}

locals {
  slices = {
    trillium_16   = { generation = "v6e", topology = "4x4" }
    trillium_8    = { generation = "v6e", topology = "2x4" }
    v5p_128       = { generation = "v5p", topology = "4x4x4" }
    ironwood_cube = { generation = "tpu7x", topology = "4x4x4" }
  }
}

data "raytpu_topology" "slice" {
  for_each   = local.slices
  generation = each.value.generation
  topology   = each.value.topology
}

output "slices" {
  value = {
    for name, s in data.raytpu_topology.slice : name => {
      accelerator_type = s.accelerator_type
      machine_type     = s.machine_type
      hosts            = s.num_hosts
      chips            = s.total_chips
      min_gke_version  = s.min_gke_version
      ray_head         = s.ray.head_resource
    }
  }
}
