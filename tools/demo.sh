#!/usr/bin/env bash
# Applies examples/quickstart with the provider built from this checkout, through the CLI given,
# using a dev override so that no registry is involved.
#
# Usage: tools/demo.sh <terraform-binary> <run-dir> (run by `make demo`)
set -euo pipefail

cli=$1
run=$2
root=$(cd "$(dirname "$0")/.." && pwd)

mkdir -p "$run/plugins" "$run/work"
echo "building terraform-provider-raytpu"
go build -o "$run/plugins/terraform-provider-raytpu" "$root"

cat > "$run/cli.tfrc" <<CONFIG
provider_installation {
  dev_overrides {
    "registry.terraform.io/raytpu/raytpu" = "$run/plugins"
  }
  direct {}
}
CONFIG

cp "$root"/examples/quickstart/*.tf "$run/work/"
echo "applying examples/quickstart with $("$cli" version | head -1)"
TF_CLI_CONFIG_FILE="$run/cli.tfrc" "$cli" -chdir="$run/work" apply -auto-approve -input=false
echo
echo "state and configuration are in $run/work; \`make clean\` removes them"
