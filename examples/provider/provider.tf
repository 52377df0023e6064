terraform {
  required_providers {
    raytpu = {
      source = "raytpu/raytpu"
    }
  }
}

# Credentials come from the environment: Application Default Credentials, or
# GOOGLE_CREDENTIALS, GOOGLE_OAUTH_ACCESS_TOKEN and GOOGLE_IMPERSONATE_SERVICE_ACCOUNT.
provider "raytpu" {
  project  = "my-project"
  location = "us-east5-b" # default location of clusters: a zone that offers your TPU generations
}
