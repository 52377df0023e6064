#!/usr/bin/env bash
# Runs the whole `make test` several times in a row while stress-ng keeps extra CPU cores busy,
# to find the tests that a busy machine fails. stress-ng comes from Debian's packages and is
# installed when missing. Each run's output goes to <out>/run-N.log; the table of runs (wall time,
# result, the tests that failed) is printed at the end and kept in <out>/summary.txt.
#
# Usage: tools/test-under-load.sh <runs> <busy-cores> <out-dir>
# (run by `make test-under-load`; LOAD_RUNS and LOAD_CPUS set the first two). A busy-cores of 0
# runs without extra load, for the time to compare with.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:?usage: $0 <runs> <busy-cores> <out-dir>}
cpus=${2:?usage: $0 <runs> <busy-cores> <out-dir>}
out=${3:?usage: $0 <runs> <busy-cores> <out-dir>}

if [ "$cpus" -gt 0 ] && ! command -v stress-ng >/dev/null; then
  echo "installing stress-ng from Debian's packages"
  if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq stress-ng >/dev/null
fi

mkdir -p "$out"
stress_pid=
stop_stress() {
  if [ -n "$stress_pid" ]; then
    kill "$stress_pid" 2>/dev/null || true
    wait "$stress_pid" 2>/dev/null || true
  fi
}
trap stop_stress EXIT
if [ "$cpus" -gt 0 ]; then
  # One worker per core, each busy all the time at the default priority, as another job on a
  # shared runner would be.
  stress-ng --cpu "$cpus" --cpu-load 100 --quiet &
  stress_pid=$!
fi

summary="$out/summary.txt"
printf '%-4s %-6s %-8s %-6s %-14s %s\n' run extra seconds result "load mean/max" "failed tests" >"$summary"
failures=0
for i in $(seq 1 "$runs"); do
  log="$out/run-$i.log"
  echo "run $i of $runs: make test with $cpus extra busy cores, output in $log"
  # The one-minute load average, every 10 s of the run.
  loads="$out/load-$i.txt"
  (while sleep 10; do cut -d' ' -f1 /proc/loadavg; done) >"$loads" &
  sampler=$!
  start=$(date +%s)
  if make --no-print-directory test >"$log" 2>&1; then result=pass; else result=FAIL; failures=$((failures + 1)); fi
  seconds=$(($(date +%s) - start))
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  load=$(awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "%.1f/%.1f", s / NR, m; else print "-" }' "$loads")
  failed=$(grep -oE -- '--- FAIL: [^ ]+' "$log" | sed 's/--- FAIL: //' | sort -u | paste -sd, - || true)
  printf '%-4s %-6s %-8s %-6s %-14s %s\n' "$i" "+$cpus" "$seconds" "$result" "$load" "${failed:--}" >>"$summary"
done
cat "$summary"
[ "$failures" -eq 0 ]
