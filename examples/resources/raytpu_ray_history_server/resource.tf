resource "raytpu_ray_history_server" "history" {
  cluster_id             = raytpu_cluster.tpu.id
  bucket                 = "my-ray-history"
  google_service_account = "ray-history@my-project.iam.gserviceaccount.com"
}

output "history_server" {
  value = raytpu_ray_history_server.history.port_forward_command
}
