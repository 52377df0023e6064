terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

variable "bucket" {
  type        = string
  description = "Cloud Storage bucket the collectors write to and the History Server reads."
  default     = "my-ray-history"
}

resource "raytpu_cluster" "ray" {
  name               = "ray-tpu"
  location           = "us-east5-b"
  min_master_version = "1.34"
}

resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium"
  generation = "v6e"
  topology   = "4x4"
}

# Once per cluster: serves every run whose collectors wrote to the bucket.
resource "raytpu_ray_history_server" "history" {
  cluster_id             = raytpu_cluster.ray.id
  bucket                 = var.bucket
  google_service_account = "ray-history@my-project.iam.gserviceaccount.com"
}

# Every Pod of the RayCluster gets KubeRay's collector beside Ray, writing to the bucket as
# ray-writer, through the Kubernetes service account raytpu makes (train-ray-history).
resource "raytpu_ray_cluster" "train" {
  cluster_id = raytpu_cluster.ray.id
  name       = "train"
  worker_groups = [{
    name   = "tpu"
    slices = [raytpu_slice.trillium.id]
  }]
  history_server = {
    bucket                 = var.bucket
    google_service_account = "ray-writer@my-project.iam.gserviceaccount.com"
  }
}

output "open_history_server" {
  value = raytpu_ray_history_server.history.port_forward_command
}

output "collector_service_account" {
  value = raytpu_ray_cluster.train.history_server.kubernetes_service_account
}
