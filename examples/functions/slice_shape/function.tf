locals {
  shape = provider::raytpu::slice_shape("v5p", "4x4x4")
}

output "hosts" {
  value = local.shape.num_hosts # 16
}

output "ray_head_resource" {
  value = local.shape.ray.head_resource # "TPU-v5p-128-head"
}
