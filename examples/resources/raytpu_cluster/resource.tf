resource "raytpu_cluster" "ray" {
  name            = "ray-tpu"
  location        = "us-east5-b" # a zone that offers the TPU generations you need
  release_channel = "RAPID"

  # At least 1.31.2-gke.1115000 for v6e slices.
  min_master_version = "1.34"

  ray_operator = {
    logging    = true
    monitoring = true
  }

  resource_labels = {
    team = "ml-platform"
  }
}

output "kuberay_ready" {
  value = raytpu_cluster.ray.kuberay.ready
}
