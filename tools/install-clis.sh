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
scratch=()
cleanup() {
  rm -f "$no_config"
  for d in "${scratch[@]}"; do chmod -R u+w "$d" && rm -rf "$d"; done
}
trap cleanup EXIT
export TF_CLI_CONFIG_FILE=$no_config

# module_copy copies the Go module $1 into a new writable folder and prints its path (the caller
# adds it to scratch, removed on exit). A module's `replace` directives apply only when it is the
# main module, and `go install pkg@version` refuses a module that has any, so such CLIs are built
# inside a copy.
module_copy() {
  local src work
  src=$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  work=$(mktemp -d)
  cp -r "$src/." "$work"
  chmod -R u+w "$work"
  echo "$work"
}

# Terraform 1.9 and newer replace ten nested modules (nine remote-state backends and
# internal/legacy) by folders the module zip leaves out, and the module proxy serves them at one old
# pseudo-version or not at all. The build drops them: the nine backends are unregistered (local,
# remote, http, inmem and cloud stay, being in the main module), which tests with local state never
# use, and internal/legacy is imported by tests only.
terraform_drop_nested_modules() {
  local work=$1 mod
  local nested="azure consul cos gcs kubernetes oci oss pg s3"
  for mod in $nested; do
    go -C "$work" mod edit -dropreplace="github.com/hashicorp/terraform/internal/backend/remote-state/$mod" \
      -droprequire="github.com/hashicorp/terraform/internal/backend/remote-state/$mod"
    sed -i -e "/internal\/backend\/remote-state\/$mod\"/d" "$work/internal/backend/init/init.go"
  done
  go -C "$work" mod edit -dropreplace=github.com/hashicorp/terraform/internal/legacy \
    -droprequire=github.com/hashicorp/terraform/internal/legacy
  # The registrations of the dropped backends, by their package names.
  sed -i -E '/backend(Azure|Consul|Cos|GCS|Kubernetes|OCI|OSS|Pg|S3)\.New\(\)/d' "$work/internal/backend/init/init.go"
}

if [ -n "$TERRAFORM_VERSION" ]; then
  terraform_dir="$CACHE/terraform-$TERRAFORM_VERSION"
  if [ ! -x "$terraform_dir/terraform" ]; then
    echo "building terraform $TERRAFORM_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
    mkdir -p "$terraform_dir"
    # version.dev=no makes the CLI report the release instead of <release>-dev.
    ldflags="-s -w -X github.com/hashicorp/terraform/version.dev=no"
    minor=$(echo "$TERRAFORM_VERSION" | cut -d. -f2)
    if [ "$minor" -lt 9 ]; then
      GOBIN="$terraform_dir" GOFLAGS=-buildvcs=false go install -trimpath -ldflags "$ldflags" \
        "github.com/hashicorp/terraform@v$TERRAFORM_VERSION"
    else
      work=$(module_copy "github.com/hashicorp/terraform@v$TERRAFORM_VERSION")
      scratch+=("$work")
      terraform_drop_nested_modules "$work"
      # Written to a temporary name first, so that an interrupted build never leaves a binary
      # that the check above would take for a finished one.
      (cd "$work" && GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath -ldflags "$ldflags" \
        -o "$terraform_dir/terraform.tmp" .)
      mv "$terraform_dir/terraform.tmp" "$terraform_dir/terraform"
    fi
  fi
  "$terraform_dir/terraform" version -json >/dev/null
  echo "terraform: $terraform_dir/terraform"
fi

if [ -n "$OPENTOFU_VERSION" ]; then
  tofu_dir="$CACHE/opentofu-$OPENTOFU_VERSION"
  if [ ! -x "$tofu_dir/tofu" ]; then
    echo "building opentofu $OPENTOFU_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
    mkdir -p "$tofu_dir"
    # OpenTofu's module has a replace directive (to its hcl fork), which applies in a copy.
    work=$(module_copy "github.com/opentofu/opentofu@v$OPENTOFU_VERSION")
    scratch+=("$work")
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
