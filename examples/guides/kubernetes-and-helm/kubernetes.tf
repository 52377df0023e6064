terraform {
  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = ">= 2.36"
    }
    helm = {
      source  = "hashicorp/helm"
      version = ">= 3.0"
    }
  }
}

provider "kubernetes" {
  host                   = ephemeral.raytpu_cluster_credentials.ray.endpoint
  cluster_ca_certificate = ephemeral.raytpu_cluster_credentials.ray.cluster_ca_certificate
  token                  = ephemeral.raytpu_cluster_credentials.ray.token
}

provider "helm" {
  kubernetes = {
    host                   = ephemeral.raytpu_cluster_credentials.ray.endpoint
    cluster_ca_certificate = ephemeral.raytpu_cluster_credentials.ray.cluster_ca_certificate
    token                  = ephemeral.raytpu_cluster_credentials.ray.token
  }
}

resource "kubernetes_namespace_v1" "ray" {
  metadata {
    name = "ray"
  }
  # The slice's hosts are Ready once it is created: workloads may land on them.
  depends_on = [raytpu_slice.trillium]
}

# Anything packaged as a chart, here Kueue to queue Ray jobs onto the slices.
resource "helm_release" "kueue" {
  name             = "kueue"
  repository       = "oci://registry.k8s.io/kueue/charts"
  chart            = "kueue"
  namespace        = "kueue-system"
  create_namespace = true
  depends_on       = [raytpu_slice.trillium]
}
