# A v6e slice of 16 chips: four ct6e-standard-4t hosts.
data "raytpu_topology" "v6e_16" {
  generation = "v6e"
  topology   = "4x4"
}

# The same slice named by its Cloud TPU accelerator type.
data "raytpu_topology" "by_accelerator_type" {
  accelerator_type = "v6e-16"
}

# v6e 2x4 as two 4-chip VMs instead of one 8-chip VM.
data "raytpu_topology" "v6e_2x4_two_hosts" {
  generation     = "v6e"
  topology       = "2x4"
  chips_per_host = 4
}

output "machine_type" {
  value = data.raytpu_topology.v6e_16.machine_type # "ct6e-standard-4t"
}

output "num_hosts" {
  value = data.raytpu_topology.v6e_16.num_hosts # 4, KubeRay's numOfHosts
}

output "node_selector" {
  value = data.raytpu_topology.v6e_16.node_selector
}
