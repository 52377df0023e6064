resource "raytpu_cluster" "ray" {
  name     = "ray-tpu"
  location = "us-east5-b"
}

# Serves what the collectors of the cluster's RayClusters write to the bucket. The Google service
# account needs roles/storage.objectViewer on it, and the Kubernetes service account
# (kubernetes_service_account) roles/iam.workloadIdentityUser on the Google one.
resource "raytpu_ray_history_server" "history" {
  cluster_id             = raytpu_cluster.ray.id
  bucket                 = "my-ray-history"
  google_service_account = "ray-history@my-project.iam.gserviceaccount.com"
}

output "history_server" {
  value = raytpu_ray_history_server.history.port_forward_command
}
