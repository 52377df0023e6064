#!/usr/bin/env bash
# Builds the pinned Terraform and OpenTofu CLIs from their Go modules (the only source reachable
# offline) into a per-machine cache folder, and prints nothing but progress. Only the CLIs whose
# version is set are built, so that a job needing one CLI does not wait for the other. A CLI
# already present in the cache is reused, so a second run is a no-op.
#
# Usage: [TERRAFORM_VERSION=x] [OPENTOFU_VERSION=y] tools/install-clis.sh [cache-dir]
# (run by `make tools-terraform` and `make tools-tofu`)
set -euo pipefail

TERRAFORM_VERSION=${TERRAFORM_VERSION:-}
OPENTOFU_VERSION=${OPENTOFU_VERSION:-}
CACHE=${1:-${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}}

if [ -z "$TERRAFORM_VERSION$OPENTOFU_VERSION" ]; then
  echo "set TERRAFORM_VERSION, OPENTOFU_VERSION or both (the GNUmakefile does)" >&2
  exit 2
fi

# A missing CLI configuration file makes the CLIs print a warning, which OpenTofu writes to stdout
# even for `version -json`; an empty one keeps the checks below independent of the machine.
no_config=$(mktemp)
trap 'rm -f "$no_config"' EXIT
export TF_CLI_CONFIG_FILE=$no_config

if [ -n "$TERRAFORM_VERSION" ]; then
  terraform_dir="$CACHE/terraform-$TERRAFORM_VERSION"
  if [ ! -x "$terraform_dir/terraform" ]; then
    echo "building terraform $TERRAFORM_VERSION from the Go module proxy (about 2 minutes on a cold cache)"
    mkdir -p "$terraform_dir"
    # version.dev=no makes the CLI report 1.8.5 instead of 1.8.5-dev.
    GOBIN="$terraform_dir" GOFLAGS=-buildvcs=false go install -trimpath \
      -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
      "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
  fi
  "$terraform_dir/terraform" version -json >/dev/null
  echo "terraform: $terraform_dir/terraform"
fi

if [ -n "$OPENTOFU_VERSION" ]; then
  tofu_dir="$CACHE/opentofu-$OPENTOFU_VERSION"
  if [ ! -x "$tofu_dir/tofu" ]; then
    echo "building opentofu $OPENTOFU_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
    mkdir -p "$tofu_dir"
    # `go install` refuses OpenTofu's module because of its replace directive; building inside a
    # writable copy of the module applies it.
    src=$(go mod download -json "github.com/opentofu/opentofu@v$OPENTOFU_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    work=$(mktemp -d)
    trap 'rm -f "$no_config"; chmod -R u+w "$work"; rm -rf "$work"' EXIT
    cp -r "$src/." "$work"
    chmod -R u+w "$work"
    # Written to a temporary name first, so that an interrupted build never leaves a binary that
    # the check above would take for a finished one.
    (cd "$work" && GOFLAGS=-buildvcs=false go build -trimpath \
      -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$tofu_dir/tofu.tmp" ./cmd/tofu)
    mv "$tofu_dir/tofu.tmp" "$tofu_dir/tofu"
  fi
  "$tofu_dir/tofu" version -json >/dev/null
  echo "tofu:      $tofu_dir/tofu"
fi
