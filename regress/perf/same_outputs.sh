#!/usr/bin/env bash
# Same outputs from two rocesim binaries (issue 12: a speed change must not
# change what the model computes).
#   regress/perf/same_outputs.sh OLD_BIN NEW_BIN [SCENARIO.yaml ...]
# Runs each scenario (default: every configs/scenarios/*.yaml) with both
# binaries and compares every output file byte for byte, except summary.json's
# two wall-clock fields (wall_time_s, link_hops_per_wall_s), which differ from
# run to run; a run's exit status must agree too. Prints SAME or DIFF per scenario (with the files
# that differ); exits 1 if any differs, 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: $0 OLD_BIN NEW_BIN [SCENARIO.yaml ...] (both binaries executable)" >&2
  exit 2
fi
old=$1 new=$2
shift 2
if [ $# -eq 0 ]; then set -- configs/scenarios/*.yaml; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for s in "$@"; do
  n=$(basename "$s" .yaml)
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    out="$tmp/$side/$n"
    mkdir -p "$out"
    rc=0
    "$bin" run "$s" --out "$out" --quiet --force >"$tmp/$side.$n.log" 2>&1 || rc=$?
    echo "$rc" >"$tmp/$side.$n.rc"
    f="$out/summary.json"
    if [ -f "$f" ]; then
      grep -vE '"(wall_time_s|link_hops_per_wall_s)":' "$f" >"$f.x"
      mv "$f.x" "$f"
    fi
  done
  if diff -rq "$tmp/old/$n" "$tmp/new/$n" >/dev/null && cmp -s "$tmp/old.$n.rc" "$tmp/new.$n.rc"; then
    echo "SAME $n"
  else
    echo "DIFF $n"
    echo "  exit status $(cat "$tmp/old.$n.rc") / $(cat "$tmp/new.$n.rc")"
    diff -rq "$tmp/old/$n" "$tmp/new/$n" | sed 's/^/  /' | head -10 || true
    status=1
  fi
done
exit $status
