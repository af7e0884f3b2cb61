#!/usr/bin/env bash
# Performance suite. Figures are quoted in docs/performance.md.
#   regress/perf/run.sh            all of it
#   regress/perf/run.sh scenarios  only the timed rocesim scenarios
#   regress/perf/run.sh qm         only the queue-manager modes (tlm, rtl, lockstep)
#   regress/perf/run.sh hops [--callgrind] [--repeat N] [SCENARIO ...]
#                                  cost per link hop of the issue-12 scenarios (S1, S2, ...):
#                                  link hops, events, wall, hops/s, peak RSS, callgrind instr/hop
# Before/after a speed change: regress/perf/same_outputs.sh OLD_BIN NEW_BIN [SCENARIO ...]
#                                  (every output byte-identical but summary.json's wall-clock fields)
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

echo "== timed scenarios"
"$PY" regress/perf/hops.py --build "$BUILD" regress/perf/link_stream.yaml regress/perf/switch_permutation.yaml \
  configs/scenarios/leafspine_permutation.yaml

echo "== cost per link hop (regress/perf/hops.py)"
"$PY" regress/perf/hops.py --build "$BUILD"

echo
"$PY" regress/perf/qm_impl.py --build "$BUILD"
