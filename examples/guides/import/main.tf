terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# Adopt a cluster made elsewhere. raytpu_cluster expects a CPU node pool named
# "system", which system_pool describes: one that differs changes the pool in place.
import {
  to = raytpu_cluster.ray
  id = "projects/my-project/locations/us-east5-b/clusters/ray-tpu"
}

resource "raytpu_cluster" "ray" {
  name     = "ray-tpu"
  project  = "my-project"
  location = "us-east5-b"

  system_pool = {
    machine_type = "e2-standard-8"
    node_count   = 1
  }
}

# Adopt one of its TPU node pools: raytpu reads the shape from the pool.
import {
  to = raytpu_slice.trillium
  id = "projects/my-project/locations/us-east5-b/clusters/ray-tpu/nodePools/trillium-4x4"
}

resource "raytpu_slice" "trillium" {
  cluster    = raytpu_cluster.ray.id
  name       = "trillium-4x4"
  generation = "v6e"
  topology   = "4x4"
}
