# A slice of a regional cluster that tries its reservation in us-east5-b
# first, then on-demand capacity in us-east5-a, then Spot in us-east5-b, then
# flex-start. Each attempt that stocks out or runs into the quota is deleted
# before the next; capacity_used says where the slice came up.
resource "raytpu_cluster" "regional" {
  name     = "ray-tpu-regional"
  location = "us-east5"
}

resource "raytpu_slice" "anywhere" {
  cluster    = raytpu_cluster.regional.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
  zone       = "us-east5-b"

  reservation = {
    name = "trillium-reservation"
  }

  fallback = [
    { zone = "us-east5-a", capacity = "on-demand" },
    { capacity = "spot" },
    { capacity = "flex-start" },
  ]
}

output "trillium_capacity" {
  value = raytpu_slice.anywhere.capacity_used
}
