#!/usr/bin/env bash
# The quickstart against the local GKE emulator, through a real CLI and this provider built from
# source (a dev override, so no registry is involved).
#
#   tools/demo.sh build <run-dir>         build the provider, the emulator and the outputs check
#   tools/demo.sh up    <cli> <run-dir>   build, start the emulator, apply examples/quickstart, check the outputs
#   tools/demo.sh down  <cli> <run-dir>   destroy, stop the emulator and its API servers, remove run-dir
#
# Run by `make demo` (which runs `build` beside the builds of the CLI and the Kubernetes binaries)
# and `make demo-down`. Running `up` twice reuses what the first run created.
set -euo pipefail

action=${1:-}
if [ "$action" = build ]; then
  cli=
  run=${2:?usage: $0 build <run-dir>}
else
  cli=${2:?usage: $0 up|down <cli> <run-dir>}
  run=${3:?usage: $0 up|down <cli> <run-dir>}
fi
root=$(cd "$(dirname "$0")/.." && pwd)
pid_file="$run/emulator.pid"
env_file="$run/emulator.env"
work="$run/work"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

emulator_running() {
  [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

start_emulator() {
  if emulator_running; then
    echo "reusing the emulator started by an earlier run (pid $(cat "$pid_file"))"
    return
  fi
  rm -f "$env_file"
  # Its state folder keeps the clusters of an earlier run, so Terraform's state stays true.
  nohup "$run/bin/raytpu-emulator" -state-dir "$run/emulator" -env-file "$env_file" \
    -latency 2s -ray-crd-delay 3s -v >"$run/emulator.log" 2>&1 &
  echo $! >"$pid_file"
  for _ in $(seq 1 600); do
    [ -s "$env_file" ] && break
    if ! emulator_running; then
      tail -20 "$run/emulator.log" >&2
      echo "the emulator did not start; its log is $run/emulator.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  [ -s "$env_file" ] || { echo "the emulator did not start within 2 minutes; see $run/emulator.log" >&2; exit 1; }
  echo "emulator running (pid $(cat "$pid_file")), log in $run/emulator.log"
}

stop_emulator() {
  emulator_running || return 0
  local pid
  pid=$(cat "$pid_file")
  kill -TERM "$pid"
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" # its kube-apiservers and etcd die with it
  fi
  rm -f "$pid_file"
  echo "emulator stopped"
}

write_cli_config() {
  cat >"$run/cli.tfrc" <<CONFIG
provider_installation {
  dev_overrides {
    "registry.terraform.io/raytpu/raytpu" = "$run/plugins"
    "registry.opentofu.org/raytpu/raytpu" = "$run/plugins"
  }
  direct {}
}
CONFIG
}

build() {
  mkdir -p "$run/plugins" "$run/bin"
  # One go command for the three, so that they compile side by side; a binary that is up to date is
  # not linked again, so `up` after `build` takes seconds.
  (cd "$root" && go build -o "$run/bin/" . ./internal/emulator/cmd/raytpu-emulator ./internal/quickstart)
  cp -p "$run/bin/terraform-provider-raytpu" "$run/plugins/terraform-provider-raytpu.tmp"
  mv "$run/plugins/terraform-provider-raytpu.tmp" "$run/plugins/terraform-provider-raytpu"
}

up() {
  mkdir -p "$work"
  step "building terraform-provider-raytpu and the GKE emulator"
  build
  write_cli_config

  step "starting the GKE emulator (each cluster is a real kube-apiserver)"
  start_emulator
  # shellcheck disable=SC1090
  source "$env_file"
  export TF_CLI_CONFIG_FILE="$run/cli.tfrc"

  step "applying examples/quickstart with $("$cli" version | head -1)"
  cp "$root"/examples/quickstart/*.tf "$work/"
  "$cli" -chdir="$work" apply -auto-approve -input=false -compact-warnings

  step "checking the outputs against the cluster's own Kubernetes API: which Ray worker runs on which host"
  "$cli" -chdir="$work" output -json >"$run/outputs.json"
  "$run/bin/quickstart" <"$run/outputs.json"

  step "done"
  cat <<SUMMARY
Every output is in $run/outputs.json.
To use the emulator yourself:   source $env_file
To see the plan again:          TF_CLI_CONFIG_FILE=$run/cli.tfrc $cli -chdir=$work plan
To destroy and stop everything: make demo-down
SUMMARY
}

down() {
  if [ -f "$work/terraform.tfstate" ] && emulator_running; then
    step "destroying the quickstart"
    write_cli_config
    # shellcheck disable=SC1090
    source "$env_file"
    TF_CLI_CONFIG_FILE="$run/cli.tfrc" "$cli" -chdir="$work" destroy -auto-approve -input=false
  fi
  step "stopping the emulator and its API servers"
  stop_emulator
  rm -rf "$run"
  echo "removed $run"
}

case "$action" in
build) build ;;
up) up ;;
down) down ;;
*)
  echo "usage: $0 build <run-dir> | up|down <cli> <run-dir>" >&2
  exit 2
  ;;
esac
