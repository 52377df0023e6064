variable "ray_cluster_id" {
  type        = string
  description = "The id of a raytpu_ray_cluster."
  default     = "projects/my-project/locations/us-east5-b/clusters/ray-tpu/rayClusters/default/train"
}

variable "run" {
  type        = string
  description = "Names one run of the job: a new value runs it again."
  default     = "1"
}

# Run the training script on the RayCluster and wait for it to end:
#   terraform apply -invoke=action.raytpu_submit_ray_job.train
action "raytpu_submit_ray_job" "train" {
  config {
    ray_cluster = var.ray_cluster_id
    entrypoint  = "python train.py --steps=1000"
    runtime_env = jsonencode({
      working_dir = "gs://my-bucket/jobs/train.zip"
      pip         = ["optax==0.2.4"]
      env_vars    = { JAX_PLATFORMS = "tpu" }
    })
    # Run the entrypoint on a TPU host rather than on the head.
    entrypoint_resources = { TPU = 4 }
    # A run that already succeeded is not submitted again.
    submission_id = "train-${var.run}"
    timeout       = "2h"
  }
}

# Or in an apply: a new run value runs the job once the rest of the apply is done.
resource "terraform_data" "train" {
  input = var.run

  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.raytpu_submit_ray_job.train]
    }
  }
}
