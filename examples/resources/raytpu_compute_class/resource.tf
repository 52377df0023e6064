resource "raytpu_cluster" "ray" {
  name     = "ray-tpu"
  location = "us-east5-b"
}

# A v6e 2x4 slice from the team's reservation; on a stockout, on demand, then flex-start for up
# to 7 days (replacements started an hour before the nodes end), then Spot. Pods select it with
# node_selector.
resource "raytpu_compute_class" "v6e" {
  cluster_id = raytpu_cluster.ray.id
  name       = "tpu-v6e-2x4"
  priorities = [
    { generation = "v6e", topology = "2x4", capacity = "reservation", reservation = "tpu-v6e-specific" },
    { generation = "v6e", topology = "2x4", capacity = "on-demand" },
    { generation = "v6e", topology = "2x4", capacity = "flex-start", max_run_duration_seconds = 604800, node_recycling_lead_time_seconds = 3600 },
    { generation = "v6e", topology = "2x4", capacity = "spot" },
  ]
}

output "node_selector" {
  value = raytpu_compute_class.v6e.node_selector
}
