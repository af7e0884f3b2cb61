#!/usr/bin/env bash
# ECN threshold sweep (seed article, section 2.3): single-threshold marking,
# K from 32 KiB to 256 KiB in 32 KiB steps, on configs/scenarios/ecn_incast.yaml
# (closed loop: RC senders with DCQCN, long flows plus repeated 8-to-1
# incasts), SEEDS runs per K (default 10, seeds 1..SEEDS, as the seed article
# runs 10 seeds per point and reads the median and the 90th percentile).
#
#   regress/sweeps/ecn_sweep.sh [OUT_DIR] [extra rocesim args, e.g. --set sim.duration=2ms]
#   SEEDS=3 KS="32 128" regress/sweeps/ecn_sweep.sh out/quick
#
# OUT_DIR/ecn_sweep_runs.csv, one row per run: k_bytes, seed, throughput_gbps
# (RDMA payload delivered x 8 / simulated time), ecn_seen, ecn_marked,
# mark_ratio, cnps, pause_frames_tx, dropped, flows_completed, slowdown_p50,
# slowdown_p99 (summary.json fct, nearest rank over completed flows),
# peak_buffer_bytes. OUT_DIR/ecn_sweep.csv, one row per K over its seeds:
# k_bytes, runs, then the median and the 90th percentile (nearest rank) of
# throughput_gbps, slowdown_p99 and pause_frames_tx, and the median
# mark_ratio. Each run's outputs are in OUT_DIR/k<K>/s<SEED>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROCESIM:-build/bin/rocesim}
OUT=${1:-out/ecn_sweep}
shift || true
SCENARIO=${SCENARIO:-configs/scenarios/ecn_incast.yaml}
SEEDS=${SEEDS:-10}
KS=${KS:-32 64 96 128 160 192 224 256}
mkdir -p "$OUT"
rows="$OUT/ecn_sweep_runs.csv.partial"
echo "k_bytes,seed,throughput_gbps,ecn_seen,ecn_marked,mark_ratio,cnps,pause_frames_tx,dropped,flows_completed,slowdown_p50,slowdown_p99,peak_buffer_bytes" > "$rows"
for kib in $KS; do
  for seed in $(seq 1 "$SEEDS"); do
    dir="$OUT/k$((kib * 1024))/s$seed"
    "$BIN" run "$SCENARIO" --out "$dir" --quiet --seed "$seed" \
      --set switch.ecn.mode=threshold --set "switch.ecn.k=${kib}KiB" "$@"
    /usr/bin/python3 - "$dir" "$((kib * 1024))" "$seed" >> "$rows" <<'PY'
import json, sys
d, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(d + "/summary.json"))
e, f = s["ecn"], s["fct"]
ratio = e["marked"] / e["seen"] if e["seen"] else 0.0
tput = s["flows"]["payload_bytes_delivered"] * 8 / s["sim_time_ns"]
def v(x):
    return "" if x is None else f"{x:.4f}"
print(f'{k},{seed},{tput:.4f},{e["seen"]},{e["marked"]},{ratio:.6f},{s["nic"]["cnps_received"]},'
      f'{s["pfc"]["pause_frames_tx"]},{s["packets"]["dropped"]},{s["flows"]["completed"]},'
      f'{v(f["slowdown_p50"])},{v(f["slowdown_p99"])},{s["buffer"]["peak_bytes"]}')
PY
  done
done
mv "$rows" "$OUT/ecn_sweep_runs.csv"
/usr/bin/python3 - "$OUT" <<'PY'
import csv, math, statistics, sys
out = sys.argv[1]
runs = list(csv.DictReader(open(out + "/ecn_sweep_runs.csv")))
def p90(v):
    v = sorted(v)
    return v[max(0, math.ceil(0.9 * len(v)) - 1)]
with open(out + "/ecn_sweep.csv.partial", "w") as f:
    f.write("k_bytes,runs,throughput_gbps_median,throughput_gbps_p90,slowdown_p99_median,slowdown_p99_p90,"
            "pause_frames_median,pause_frames_p90,mark_ratio_median\n")
    for k in dict.fromkeys(r["k_bytes"] for r in runs):
        rs = [r for r in runs if r["k_bytes"] == k]
        col = lambda c: [float(r[c]) for r in rs if r[c] != ""]
        t, s99, pf, mr = col("throughput_gbps"), col("slowdown_p99"), col("pause_frames_tx"), col("mark_ratio")
        f.write(f"{k},{len(rs)},{statistics.median(t):.4f},{p90(t):.4f},{statistics.median(s99):.4f},{p90(s99):.4f},"
                f"{statistics.median(pf):g},{p90(pf):g},{statistics.median(mr):.6f}\n")
PY
mv "$OUT/ecn_sweep.csv.partial" "$OUT/ecn_sweep.csv"
echo "ecn sweep: $OUT/ecn_sweep.csv ($OUT/ecn_sweep_runs.csv per run)"
