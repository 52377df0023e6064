# A cluster for a multi-week training campaign on TPU slices. GKE may maintain it on Saturday and
# Sunday mornings (UTC) only, not at all during the campaign's first 30 days, and it upgrades
# neither the nodes nor the control plane's minor version until the version's end of support.
resource "raytpu_cluster" "training" {
  name     = "ray-tpu-training"
  location = "us-east5-b"

  maintenance_policy = {
    recurring_window = {
      start_time = "2025-01-04T02:00:00Z"
      end_time   = "2025-01-04T10:00:00Z" # 8 hours: at least 48 hours in any 32 days
      recurrence = "FREQ=WEEKLY;BYDAY=SA,SU"
    }
    exclusions = [
      {
        name       = "campaign-freeze"
        start_time = "2027-01-11T00:00:00Z"
        end_time   = "2027-02-10T00:00:00Z" # NO_UPGRADES (the default scope): at most 30 days
      },
      {
        name                 = "campaign-nodes"
        start_time           = "2027-01-11T00:00:00Z"
        scope                = "NO_MINOR_OR_NODE_UPGRADES"
        until_end_of_support = true
      },
    ]
  }
}
