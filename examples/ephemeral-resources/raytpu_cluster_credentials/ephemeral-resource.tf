resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  min_master_version = "1.34"
}

# Opened on every plan and apply; never written to the plan or the state.
ephemeral "raytpu_cluster_credentials" "ray" {
  cluster = raytpu_cluster.ray.id
}

# Ephemeral values go where Terraform allows them: provider configuration,
# other ephemeral resources, write-only arguments and locals that feed those.
locals {
  kubernetes = {
    host                   = ephemeral.raytpu_cluster_credentials.ray.endpoint
    cluster_ca_certificate = ephemeral.raytpu_cluster_credentials.ray.cluster_ca_certificate
    token                  = ephemeral.raytpu_cluster_credentials.ray.token
  }
}
