# v6e 2x4 on two 4-chip hosts instead of one 8-chip VM, from a reservation.
resource "raytpu_slice" "trillium_reserved" {
  cluster        = raytpu_cluster.ray.id
  name           = "trillium-2x4"
  generation     = "v6e"
  topology       = "2x4"
  chips_per_host = 4

  reservation = {
    name = "trillium-reservation"
  }
}
