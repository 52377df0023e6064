terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# A cluster created elsewhere, for example by google_container_cluster in another
# configuration: projects/{project}/locations/{location}/clusters/{name}.
variable "cluster_id" {
  type = string
}

# Enables the Ray Operator add-on and waits until the KubeRay CRDs serve.
resource "raytpu_ray_operator" "kuberay" {
  cluster = var.cluster_id
}

# Taking the cluster id from the add-on orders the slice after it.
resource "raytpu_slice" "v5e" {
  cluster    = raytpu_ray_operator.kuberay.cluster
  name       = "v5e-4x8"
  generation = "v5e"
  topology   = "4x8"
}
