terraform {
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

locals {
  slice = raytpu_slice.trillium

  # The arguments of ray.util.tpu.slice_placement_group and of Ray Train's
  # ScalingConfig, handed to the driver as JSON in environment variables.
  driver_env = [
    {
      name  = "RAYTPU_SLICE_PLACEMENT_GROUP"
      value = jsonencode(local.slice.slice_placement_group)
    },
    {
      name = "RAYTPU_SCALING_CONFIG"
      value = jsonencode({
        use_tpu          = true
        num_workers      = local.slice.num_hosts
        topology         = local.slice.slice_placement_group.topology
        accelerator_type = local.slice.ray.accelerator_type
      })
    },
  ]

  ray_cluster = {
    apiVersion = "ray.io/v1"
    kind       = "RayCluster"
    metadata = {
      name      = "trillium"
      namespace = "default"
    }
    spec = {
      rayVersion = local.slice.ray.version
      headGroupSpec = {
        rayStartParams = {}
        template = {
          spec = {
            # The head runs on the cluster's CPU node pool.
            nodeSelector = { "cloud.google.com/gke-nodepool" = "system" }
            containers = [{
              name  = "ray-head"
              image = local.slice.ray.image # the same Ray version as the workers
              env   = local.driver_env
              resources = {
                requests = { cpu = "2", memory = "8Gi" }
              }
            }]
          }
        }
      }
      # numOfHosts, the google.com/tpu resources, node selector and toleration
      # of this slice, exactly as KubeRay and the Ray TPU webhook expect them.
      workerGroupSpecs = [jsondecode(local.slice.kuberay_worker_group)]
    }
  }
}

# Apply it with kubectl, or with the manifest resource of a Kubernetes provider.
output "ray_cluster_yaml" {
  value = yamlencode(local.ray_cluster)
}
