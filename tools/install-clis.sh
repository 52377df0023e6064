#!/usr/bin/env bash
# Builds the pinned Terraform and OpenTofu CLIs from their Go modules (the only source reachable
# offline) into a per-machine cache folder, and prints nothing but progress. A CLI already present
# in the cache is reused, so a second run is a no-op.
#
# Usage: TERRAFORM_VERSION=x OPENTOFU_VERSION=y tools/install-clis.sh [cache-dir] (run by `make tools`)
set -euo pipefail

TERRAFORM_VERSION=${TERRAFORM_VERSION:?set by the GNUmakefile}
OPENTOFU_VERSION=${OPENTOFU_VERSION:?set by the GNUmakefile}
CACHE=${1:-${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}}

terraform_dir="$CACHE/terraform-$TERRAFORM_VERSION"
if [ ! -x "$terraform_dir/terraform" ]; then
  echo "building terraform $TERRAFORM_VERSION from the Go module proxy (a few minutes on a cold cache)"
  mkdir -p "$terraform_dir"
  # version.dev=no makes the CLI report 1.8.5 instead of 1.8.5-dev.
  GOBIN="$terraform_dir" GOFLAGS=-buildvcs=false go install -trimpath \
    -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
    "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
fi

tofu_dir="$CACHE/opentofu-$OPENTOFU_VERSION"
if [ ! -x "$tofu_dir/tofu" ]; then
  echo "building opentofu $OPENTOFU_VERSION from the Go module proxy (a few minutes on a cold cache)"
  mkdir -p "$tofu_dir"
  # `go install` refuses OpenTofu's module because of its replace directive; building inside a
  # writable copy of the module applies it.
  src=$(go mod download -json "github.com/opentofu/opentofu@v$OPENTOFU_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -r "$src/." "$work"
  chmod -R u+w "$work"
  (cd "$work" && GOFLAGS=-buildvcs=false go build -trimpath \
    -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
    -o "$tofu_dir/tofu" ./cmd/tofu)
fi

"$terraform_dir/terraform" version -json >/dev/null 2>&1
"$tofu_dir/tofu" version -json >/dev/null 2>&1
echo "terraform: $terraform_dir/terraform"
echo "tofu:      $tofu_dir/tofu"
