# Your own credentials (Application Default Credentials here) obtain tokens of a
# deployment service account, which does the work.
provider "raytpu" {
  project                     = "my-project"
  location                    = "us-east5-b"
  impersonate_service_account = "terraform@my-project.iam.gserviceaccount.com"
}
