#!/usr/bin/env bash
# ECN threshold sweep (seed article, section 2.3): single-threshold marking,
# K from 32 KiB to 256 KiB in 32 KiB steps, on
# configs/scenarios/ecn_k_sweep.yaml (closed loop: RC senders with DCQCN, an
# 8-to-1 incast across a 25G/100G leaf-spine plus short probes, PFC's XOFF
# at 256 KiB), SEEDS runs per K (default 10, seeds 1..SEEDS, as the seed
# article runs 10 seeds per point and reads the median and the 90th
# percentile).
#
#   regress/sweeps/ecn_sweep.sh [OUT_DIR] [extra rocesim args, e.g. --set sim.duration=2ms]
#   SEEDS=3 KS="32 256" regress/sweeps/ecn_sweep.sh out/quick
#   SCENARIO=configs/scenarios/ecn_incast.yaml regress/sweeps/ecn_sweep.sh out/other
#
# Flows are split at 10 KB, the first FCT bucket of summary.json: larger
# flows are the bulk (the incast), smaller ones the short flows.
# OUT_DIR/ecn_sweep_runs.csv, one row per run: k_bytes, seed,
#   throughput_gbps: the bulk flows' payload delivered x 8 / the time at
#     least one of them is active (from its start to its finish, or to the
#     end of the run if it did not finish; a flow starting after the end
#     counts nothing): the goodput while there is bulk data to send;
#   line_fraction: throughput_gbps / the line rate of the bulk flows'
#     receivers (summed over distinct receivers);
#   ecn_seen, ecn_marked, mark_ratio (marked / seen, every marking queue),
#   cnps (received by senders), pause_frames_tx (every switch and NIC),
#   dropped, flows_completed, bulk_completed, bulk_flows;
#   slowdown_p99: the short flows' p99 FCT slowdown (summary.json
#     fct.by_size[0], nearest rank; all flows' p99 if there are none);
#   peak_buffer_bytes.
# OUT_DIR/ecn_sweep.csv, one row per K over its seeds: k_bytes, runs, then
# the median and the 90th percentile (nearest rank) of line_fraction,
# throughput_gbps, slowdown_p99, pause_frames_tx and mark_ratio.
# Each run's outputs are in OUT_DIR/k<K>/s<SEED>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROCESIM:-build/bin/rocesim}
OUT=${1:-out/ecn_sweep}
shift || true
SCENARIO=${SCENARIO:-configs/scenarios/ecn_k_sweep.yaml}
SEEDS=${SEEDS:-10}
KS=${KS:-32 64 96 128 160 192 224 256}
mkdir -p "$OUT"
rows="$OUT/ecn_sweep_runs.csv.partial"
echo "k_bytes,seed,throughput_gbps,line_fraction,ecn_seen,ecn_marked,mark_ratio,cnps,pause_frames_tx,dropped,flows_completed,bulk_completed,bulk_flows,slowdown_p99,peak_buffer_bytes" > "$rows"
for kib in $KS; do
  for seed in $(seq 1 "$SEEDS"); do
    dir="$OUT/k$((kib * 1024))/s$seed"
    "$BIN" run "$SCENARIO" --out "$dir" --force --quiet --seed "$seed" \
      --set switch.ecn.mode=threshold --set "switch.ecn.k=${kib}KiB" "$@"
    /usr/bin/python3 - "$dir" "$((kib * 1024))" "$seed" >> "$rows" <<'PY'
import csv, json, sys
sys.path.insert(0, "regress")  # the runner's metrics: one definition of the active-time throughput
from regresslib.metrics import active_goodput
d, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = json.load(open(d + "/summary.json"))
end = s["sim_time_ns"]
short_max = s["fct"]["by_size"][0]["max_bytes"]  # 10 KB: the first FCT bucket
bulk = [f for f in csv.DictReader(open(d + "/flows.csv")) if int(f["size_bytes"]) >= short_max]
# Bits received over the union of the bulk flows' active intervals (a flow starting at or after the
# end of a run cut short is never active); Gbps, 0 when none was active.
tput = active_goodput(bulk, end) or 0.0
rate = {p["node"]: p["rate_bps"] for p in s["ports"]}
line = sum(rate[h] for h in {f["dst"] for f in bulk})
e, f = s["ecn"], s["fct"]
ratio = e["marked"] / e["seen"] if e["seen"] else 0.0
p99 = f["by_size"][0]["slowdown_p99"]
if p99 is None:
    p99 = f["slowdown_p99"]
v = lambda x: "" if x is None else f"{x:.4f}"
print(f'{k},{seed},{tput:.4f},{tput * 1e9 / line if line else 0:.4f},{e["seen"]},{e["marked"]},{ratio:.6f},'
      f'{s["nic"]["cnps_received"]},{s["pfc"]["pause_frames_tx"]},{s["packets"]["dropped"]},{s["flows"]["completed"]},'
      f'{sum(x["completed"] == "1" for x in bulk)},{len(bulk)},{v(p99)},{s["buffer"]["peak_bytes"]}')
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
cols = ["line_fraction", "throughput_gbps", "slowdown_p99", "pause_frames_tx", "mark_ratio"]
with open(out + "/ecn_sweep.csv.partial", "w") as f:
    f.write("k_bytes,runs," + ",".join(f"{c}_median,{c}_p90" for c in cols) + "\n")
    for k in dict.fromkeys(r["k_bytes"] for r in runs):
        rs = [r for r in runs if r["k_bytes"] == k]
        cells = []
        for c in cols:
            x = [float(r[c]) for r in rs if r[c] != ""]
            cells += [f"{statistics.median(x):.6g}", f"{p90(x):.6g}"] if x else ["", ""]
        f.write(f"{k},{len(rs)}," + ",".join(cells) + "\n")
PY
mv "$OUT/ecn_sweep.csv.partial" "$OUT/ecn_sweep.csv"
echo "ecn sweep: $OUT/ecn_sweep.csv ($OUT/ecn_sweep_runs.csv per run)"
