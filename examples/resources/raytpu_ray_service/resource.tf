resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5-b"
  min_master_version = "1.34"
}

# Two identical v6e 4x4 slices (four hosts each): one worker group, a replica on each.
resource "raytpu_slice" "serve" {
  count      = 2
  cluster    = raytpu_cluster.ray.id
  name       = "serve-${count.index}"
  generation = "v6e"
  topology   = "4x4"
}

resource "raytpu_ray_service" "llm" {
  cluster_id = raytpu_cluster.ray.id
  name       = "llm"

  # Image rayproject/ray:2.55.0-py310-tpu.
  ray_version = "2.55.0"

  head = {
    cpu              = "4"
    memory           = "16Gi"
    ray_start_params = { "dashboard-host" = "0.0.0.0" }
  }

  worker_groups = [
    # replicas = 2 (one per slice), numOfHosts = 4, google.com/tpu = 4 per host.
    { name = "tpu", slices = raytpu_slice.serve[*].id },
  ]

  # Ray Serve's config file. A change of it alone is applied in place, to the same RayCluster; a
  # change of anything above is an upgrade, on free slices (see upgrade_strategy).
  serve_config_v2 = yamlencode({
    applications = [{
      name         = "llm"
      import_path  = "serve_llm:app"
      route_prefix = "/"
      runtime_env = {
        working_dir = "https://github.com/my-org/serve-llm/archive/main.zip"
      }
      deployments = [{
        name         = "LLMServer"
        num_replicas = 8
        # A replica on each host: its four chips.
        ray_actor_options = { resources = { TPU = 4 } }
      }]
    }]
  })
}

output "serve" {
  value = {
    endpoint     = raytpu_ray_service.llm.serve_address
    applications = raytpu_ray_service.llm.applications
    # worker group -> replica (one slice) -> hosts {pod, node, node_pool, host_index, phase, running}
    placement   = raytpu_ray_service.llm.placement
    ray_cluster = raytpu_ray_service.llm.ray_cluster_name
  }
}
