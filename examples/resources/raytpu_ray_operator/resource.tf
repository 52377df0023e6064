# The id of a cluster that another configuration manages, for example the id
# attribute of a google_container_cluster:
# projects/{project}/locations/{location}/clusters/{name}.
variable "cluster_id" {
  type = string
}

# Turn on GKE's Ray Operator add-on (GKE-managed KubeRay) and wait for its CRDs.
resource "raytpu_ray_operator" "kuberay" {
  cluster    = var.cluster_id
  logging    = true
  monitoring = true
}

output "kuberay_crds" {
  value = raytpu_ray_operator.kuberay.kuberay.crds
}
