# Every TPU node pool of one cluster, whoever made it, with the attributes each
# has as a raytpu_slice: `terraform query -generate-config-out=slices.tf`
# writes a resource block and an import block for each.
list "raytpu_slice" "ray_tpu" {
  provider         = raytpu
  include_resource = true

  config {
    cluster = "projects/my-project/locations/us-east5-b/clusters/ray-tpu"
  }
}

# The TPU node pools of every cluster of the project, in every location: their
# identities and display names.
list "raytpu_slice" "everywhere" {
  provider = raytpu

  config {
    project  = "my-project"
    location = "-"
  }
}
