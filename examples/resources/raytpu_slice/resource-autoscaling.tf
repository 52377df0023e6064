# A slice the cluster autoscaler scales between none and all of its 4 hosts,
# as one unit: KubeRay's autoscaler brings it up when a Ray job asks for a
# TPU worker group, and it stops billing once it has been idle.
resource "raytpu_slice" "elastic" {
  cluster     = raytpu_cluster.ray.id
  name        = "v5p-2x2x4"
  generation  = "v5p"
  topology    = "2x2x4"
  autoscaling = true
}
