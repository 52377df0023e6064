# v5p-128 is 128 TensorCores: 64 chips, 4x4x4, sixteen ct5p-hightpu-4t hosts.
resource "raytpu_slice" "v5p_spot" {
  cluster          = raytpu_cluster.ray.id
  name             = "v5p-128"
  accelerator_type = "v5p-128"
  spot             = true
}
