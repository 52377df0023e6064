terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# No credentials here: with TFC_GCP_PROVIDER_AUTH set on the workspace, HCP Terraform
# writes an external_account credentials file for each run and points
# GOOGLE_APPLICATION_CREDENTIALS at it, which raytpu reads as Application Default
# Credentials.
provider "raytpu" {
  project  = "my-project"
  location = "us-east5-b"
}

resource "raytpu_cluster" "ray" {
  name                = "ray-tpu"
  deletion_protection = false
}
