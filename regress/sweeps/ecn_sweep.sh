#!/usr/bin/env bash
# ECN threshold sweep (seed article, section 4.2): K from 32 KiB to 256 KiB in
# 32 KiB steps on configs/scenarios/ecn_incast.yaml (incast plus long flows),
# single-threshold marking, one run per K. Writes one summary row per K.
#
#   regress/sweeps/ecn_sweep.sh [OUT_DIR] [extra rocesim args, e.g. --seed 3]
#
# OUT_DIR/ecn_sweep.csv columns: k_bytes, ecn_seen, ecn_marked, mark_ratio,
# pause_frames_tx, dropped, flows_completed, fct_p50_ns, fct_p99_ns,
# max_slowdown, peak_buffer_bytes, sim_time_ns. Each run's outputs are in
# OUT_DIR/k<K>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROCESIM:-build/bin/rocesim}
OUT=${1:-out/ecn_sweep}
shift || true
SCENARIO=${SCENARIO:-configs/scenarios/ecn_incast.yaml}
mkdir -p "$OUT"
rows="$OUT/ecn_sweep.csv.partial"
echo "k_bytes,ecn_seen,ecn_marked,mark_ratio,pause_frames_tx,dropped,flows_completed,fct_p50_ns,fct_p99_ns,max_slowdown,peak_buffer_bytes,sim_time_ns" > "$rows"
for kib in 32 64 96 128 160 192 224 256; do
  dir="$OUT/k$((kib * 1024))"
  "$BIN" run "$SCENARIO" --out "$dir" --quiet \
    --set switch.ecn.mode=threshold --set "switch.ecn.k=${kib}KiB" "$@"
  /usr/bin/python3 - "$dir" "$((kib * 1024))" >> "$rows" <<'PY'
import csv, json, sys
d, k = sys.argv[1], int(sys.argv[2])
s = json.load(open(d + "/summary.json"))
fct = sorted(float(r["fct_ns"]) for r in csv.DictReader(open(d + "/flows.csv")) if r["fct_ns"])
slow = [float(r["slowdown"]) for r in csv.DictReader(open(d + "/flows.csv")) if r["slowdown"]]
def pct(v, p):
    return v[min(len(v) - 1, int(p * len(v)))] if v else ""
e = s["ecn"]
ratio = e["marked"] / e["seen"] if e["seen"] else 0.0
print(f'{k},{e["seen"]},{e["marked"]},{ratio:.6f},{s["pfc"]["pause_frames_tx"]},{s["packets"]["dropped"]},'
      f'{s["flows"]["completed"]},{pct(fct, 0.5)},{pct(fct, 0.99)},{max(slow) if slow else ""},'
      f'{s["buffer"]["peak_bytes"]},{s["sim_time_ns"]}')
PY
done
mv "$rows" "$OUT/ecn_sweep.csv"
echo "ecn sweep: $OUT/ecn_sweep.csv"
