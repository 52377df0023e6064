resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5-b"
  min_master_version = "1.34"

  # Room for the two slices below (32 chips) and one auto-provisioned v6e 2x4 (8 chips). GKE counts
  # every node against the cpu and memory limits too: ten ct6e-standard-4t hosts (180 vCPUs, 720 GB
  # each) and the system pool's e2-standard-8 (8 vCPUs, 32 GB) make 1808 cores and 7232 GB.
  auto_provisioning = {
    max_cpu       = 2000
    max_memory_gb = 8000
    tpu_limits    = [{ generation = "v6e", max_chips = 40 }]
  }
}

# Two identical v6e 4x4 slices (four hosts each) for one multislice worker group.
resource "raytpu_slice" "trillium" {
  count      = 2
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-${count.index}"
  generation = "v6e"
  topology   = "4x4"
}

resource "raytpu_ray_cluster" "train" {
  cluster_id = raytpu_cluster.ray.id
  name       = "train"

  # Image rayproject/ray:2.55.0-py310-tpu.
  ray_version    = "2.55.0"
  python_version = "3.10"

  head = {
    cpu              = "2"
    memory           = "8Gi"
    ray_start_params = { "dashboard-host" = "0.0.0.0" }
  }

  worker_groups = [
    # replicas = 2 (one per slice), numOfHosts = 4, google.com/tpu = 4 per host.
    {
      name   = "multislice"
      slices = raytpu_slice.trillium[*].id
      # A Kubernetes ServiceAccount of the namespace, which Workload Identity maps to a Google
      # service account (for example one that may read the training data's bucket).
      service_account_name = "ray-train"
      env                  = { JAX_COMPILATION_CACHE_DIR = "/data/jax-cache" }
      annotations          = { "gke-gcsfuse/volumes" = "true" }
      volumes = [
        { name = "shm", mount_path = "/dev/shm", empty_dir = { medium = "Memory", size_limit = "64Gi" } },
        { name = "data", mount_path = "/data", csi = { driver = "gcsfuse.csi.storage.gke.io", volume_attributes = { bucketName = "my-training-data" } } },
      ]
    },
    # No slice resource: the Pods ask for a v6e 2x4 on two 4-chip hosts, and GKE node
    # auto-provisioning creates the node pool, within the cluster's auto_provisioning limits.
    { name = "burst", generation = "v6e", topology = "2x4", chips_per_host = 4 },
  ]

  timeouts = {
    create = "45m"
  }
}

output "ray" {
  value = {
    dashboard = raytpu_ray_cluster.train.dashboard_address
    client    = raytpu_ray_cluster.train.client_address
    # worker group -> replica (one slice) -> hosts {pod, node, node_pool, host_index, phase, running}
    placement = raytpu_ray_cluster.train.placement
    healthy   = raytpu_ray_cluster.train.healthy
  }
}
