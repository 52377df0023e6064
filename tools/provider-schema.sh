#!/usr/bin/env bash
# Writes the provider's schema as `providers schema -json` prints it, for tfplugindocs
# (--providers-schema). The Makefile passes the newest pinned Terraform, which reports ephemeral
# resources, resource identities, list resources and actions, which the oldest (1.8.5) predates
# and OpenTofu lacks; the provider is built from source and reached through a dev override, so no
# registry is involved.
#
# Usage: tools/provider-schema.sh <terraform or tofu> <out.json>
set -euo pipefail

cli=${1:?usage: $0 <terraform or tofu> <out.json>}
out=${2:?usage: $0 <terraform or tofu> <out.json>}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/plugins/terraform-provider-raytpu" .)
cat >"$work/cli.tfrc" <<CONFIG
provider_installation {
  dev_overrides {
    "hashicorp/raytpu" = "$work/plugins"
  }
  direct {}
}
CONFIG
cat >"$work/main.tf" <<'CONFIG'
terraform {
  required_providers {
    raytpu = { source = "hashicorp/raytpu" }
  }
}
CONFIG
# tfplugindocs looks the provider up under Terraform's registry address.
TF_CLI_CONFIG_FILE="$work/cli.tfrc" "$cli" -chdir="$work" providers schema -json |
  sed 's#"registry.opentofu.org/hashicorp/raytpu"#"registry.terraform.io/hashicorp/raytpu"#' >"$out.tmp"
mv "$out.tmp" "$out"
