terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# The endpoints and the token come from the emulator's export lines:
# RAYTPU_CONTAINER_ENDPOINT, RAYTPU_COMPUTE_ENDPOINT and GOOGLE_OAUTH_ACCESS_TOKEN.
provider "raytpu" {
  project  = "local-project"
  location = "us-central2-b"
}

resource "raytpu_cluster" "ray" {
  name                = "ray-local"
  deletion_protection = false # so that `destroy` cleans up
}

resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
  # A slice with a failed host is replaced on the next apply: it cannot be repaired in place.
  replace_unhealthy = true
}

# The emulated hosts are real Kubernetes nodes of the cluster's API server.
output "hosts" {
  value = raytpu_slice.trillium.hosts
}

output "kuberay_ready" {
  value = raytpu_cluster.ray.kuberay.ready
}

# For kubectl: the cluster's own API server and its CA.
output "endpoint" {
  value = raytpu_cluster.ray.endpoint
}

output "ca_certificate" {
  value = raytpu_cluster.ray.ca_certificate
}
