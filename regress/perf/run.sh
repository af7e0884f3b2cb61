#!/usr/bin/env bash
# Performance suite: Google Benchmark figures for encode+link+decode, and a
# timed rocesim scenario. Figures are quoted in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD_DIR:-build}
echo "== encode -> MAC -> cable -> MAC -> parse (frames per wall-second = items_per_second)"
"$BUILD/bin/rocesim_bench_link" --benchmark_min_time=1 "$@"
echo
echo "== timed scenario: regress/perf/link_stream.yaml"
out=$(mktemp -d)
"$BUILD/bin/rocesim" run regress/perf/link_stream.yaml --out "$out" --quiet
/usr/bin/python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
w = s["wall_time_s"]
print(f"frames {s['packets']['sent']}  link_hops {s['link_hops']}  wall {w:.3f} s  "
      f"-> {s['link_hops']/w/1e6:.2f} M link-hops/s, simulated {s['sim_time_ns']/1e3:.1f} us")
PY
rm -rf "$out"
