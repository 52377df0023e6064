#!/usr/bin/env bash
# Says, before anything is built, which pinned tools the cache lacks and roughly how long their
# first build takes, so that a cold `make test` or `make demo` is not taken for a hung one. Prints
# nothing when every tool is there.
#
# Usage: tools/tools-notice.sh <name>=<path>=<minutes> ...
# (run by the GNUmakefile with the minutes each build took on a fresh two-core machine, module
# downloads included)
set -euo pipefail

missing=()
total=0
for tool in "$@"; do
  name=${tool%%=*}
  rest=${tool#*=}
  path=${rest%=*}
  minutes=${rest##*=}
  if [ ! -x "$path" ]; then
    missing+=("$name (~${minutes} min)")
    total=$((total + minutes))
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'the tool cache lacks %s: building them first, about %d minutes in all on two cores, once\n' \
    "$(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')" "$total"
fi
