#!/usr/bin/env bash
# Performance suite. Figures are quoted in docs/performance.md.
#   regress/perf/run.sh            all of it
#   regress/perf/run.sh scenarios  only the timed rocesim scenarios
#   regress/perf/run.sh qm         only the queue-manager modes (tlm, rtl, lockstep)
#   regress/perf/run.sh hops [--callgrind] [--repeat N] [SCENARIO ...]
#                                  cost per link hop of the issue-12 scenarios (S1, S2, ...):
#                                  link hops, events, wall, hops/s, peak RSS, callgrind instr/hop
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
PY=/usr/bin/python3

if [ "${1:-all}" = hops ]; then
  shift
  exec "$PY" regress/perf/hops.py --build "$BUILD" "$@"
fi

if [ "${1:-all}" = qm ]; then
  "$PY" regress/perf/qm_impl.py --build "$BUILD"
  exit 0
fi

if [ "${1:-all}" != scenarios ]; then
  echo "== encode -> MAC -> cable -> MAC -> parse (frames per wall-second = items_per_second)"
  "$BUILD/bin/rocesim_bench_link" --benchmark_min_time=1
  echo
fi

# Runs one scenario, then prints link-hops per wall-second (from summary.json)
# and the peak RSS of the process (getrusage of the child).
timed() {
  local cfg=$1 out
  out=$(mktemp -d)
  "$PY" - "$BUILD/bin/rocesim" "$cfg" "$out" <<'PY'
import json, resource, subprocess, sys
rocesim, cfg, out = sys.argv[1:4]
subprocess.run([rocesim, "run", cfg, "--out", out, "--quiet"], check=True)
rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
s = json.load(open(out + "/summary.json"))
w = s["wall_time_s"]
print(f"{cfg}: {s['link_hops']} link hops in {w:.3f} s wall -> "
      f"{s['link_hops'] / w / 1e6:.2f} M link-hops/s; simulated {s['sim_time_ns'] / 1e6:.3f} ms; "
      f"peak RSS {rss_mib:.1f} MiB")
PY
  rm -rf "$out"
}

echo "== timed scenarios"
timed regress/perf/link_stream.yaml
timed regress/perf/switch_permutation.yaml
timed configs/scenarios/leafspine_permutation.yaml

echo "== cost per link hop (regress/perf/hops.py)"
"$PY" regress/perf/hops.py --build "$BUILD"

echo
"$PY" regress/perf/qm_impl.py --build "$BUILD"
