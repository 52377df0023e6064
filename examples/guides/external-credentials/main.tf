terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

variable "identity_token" {
  description = "The workload's OIDC token (a JWT), such as identity_token.gcp.jwt in a Stack."
  type        = string
  sensitive   = true
}

provider "raytpu" {
  project  = "my-project"
  location = "us-east5-b"

  external_credentials {
    audience              = "//iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/hcp-terraform/providers/hcp-terraform"
    service_account_email = "terraform@my-project.iam.gserviceaccount.com"
    identity_token        = var.identity_token
  }
}

data "raytpu_topology" "trillium" {
  accelerator_type = "v6e-16"
}
