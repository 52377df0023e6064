terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}
