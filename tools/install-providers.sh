#!/usr/bin/env bash
# Builds the Terraform providers that raytpu's acceptance tests use beside raytpu, from the Go
# module proxy, into a per-machine cache folder; a provider already there is reused.
#
#   hashicorp/kubernetes  applies workloads to a raytpu cluster, configured from the ephemeral
#                         raytpu_cluster_credentials, as the kubernetes-and-helm guide does.
#
# Usage: KUBERNETES_PROVIDER_VERSION=<module version> tools/install-providers.sh [cache-dir]
# The last line printed is `providers: <dir>`: the folder the tests' CLI configuration names in
# its dev_overrides (RAYTPU_TEST_PROVIDERS_DIR).
set -euo pipefail

: "${KUBERNETES_PROVIDER_VERSION:?set KUBERNETES_PROVIDER_VERSION (the GNUmakefile does)}"
CACHE=${1:-${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}}
dir="$CACHE/providers-kubernetes-$KUBERNETES_PROVIDER_VERSION"

if [ ! -x "$dir/terraform-provider-kubernetes" ]; then
  echo "building terraform-provider-kubernetes $KUBERNETES_PROVIDER_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
  mkdir -p "$dir"
  gobin=$(mktemp -d)
  trap 'rm -rf "$gobin"' EXIT
  GOBIN="$gobin" GOFLAGS=-buildvcs=false CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
    "github.com/hashicorp/terraform-provider-kubernetes@$KUBERNETES_PROVIDER_VERSION"
  mv "$gobin/terraform-provider-kubernetes" "$dir/terraform-provider-kubernetes"
fi
echo "providers: $dir"
