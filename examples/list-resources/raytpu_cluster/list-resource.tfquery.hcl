# The project's clusters in every location that raytpu_cluster can adopt.
list "raytpu_cluster" "all" {
  provider         = raytpu
  include_resource = true

  config {
    project  = "my-project"
    location = "-"
  }
}
