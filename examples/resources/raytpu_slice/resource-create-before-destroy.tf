# A slice replaced by a new one before it is deleted: the node pool is named
# "trillium-" and eight random characters, so that both can exist at once, and
# the old slice keeps its TPUs until the new one has its own. If the new one
# meets a stockout, the apply fails and the old slice keeps running.
resource "raytpu_slice" "rolling" {
  cluster     = raytpu_cluster.ray.id
  name_prefix = "trillium-"
  generation  = "v6e"
  topology    = "4x4"

  lifecycle {
    create_before_destroy = true
  }
}
