terraform {
  # Ephemeral resources: Terraform 1.10 or OpenTofu 1.11 and later.
  required_version = ">= 1.10"
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  min_master_version = "1.34"
}

resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
}

# The endpoint, CA certificate and an access token of raytpu's own credentials,
# opened on every plan and apply and never written to the plan or the state.
ephemeral "raytpu_cluster_credentials" "ray" {
  cluster = raytpu_cluster.ray.id
}
