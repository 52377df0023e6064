# Turn on GKE's Ray Operator add-on for a cluster managed by another configuration.
resource "raytpu_ray_operator" "kuberay" {
  cluster    = google_container_cluster.training.id
  logging    = true
  monitoring = true
}
