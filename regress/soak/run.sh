#!/usr/bin/env bash
# Soak: runs regress/soak/soak_leafspine.yaml (250 ms simulated, leaf-spine,
# long + incast + background on RC + DCQCN + PFC) and samples the process's
# resident memory (VmRSS in /proc/PID/status) once a second, with the
# simulated time reached (the last complete row of the queues.csv being
# streamed: stats.interval 100 us). After warm-up (SOAK_WARMUP, the first
# 50 ms simulated) the least-squares slope of RSS over simulated time must be
# under SOAK_LIMIT_PCT (1) percent of the RSS at warm-up per 100 ms simulated.
#   usage: regress/soak/run.sh [OUT_DIR]   (default: a temporary directory)
#   env ROCESIM_BIN (build/bin/rocesim), SOAK_DURATION (the scenario's 250ms),
#       SOAK_WARMUP_MS (50), SOAK_LIMIT_PCT (1)
# Writes OUT_DIR/rss.csv (wall_s, sim_ms, rss_kib) and prints the verdict
# line quoted in docs/robustness.md. Exit 0 within the bound, 1 beyond it.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROCESIM_BIN:-build/bin/rocesim}
OUT=${1:-$(mktemp -d /tmp/rocesim-soak-XXXXXX)}
WARMUP_MS=${SOAK_WARMUP_MS:-50}
LIMIT=${SOAK_LIMIT_PCT:-1}
SETS=()
[ -n "${SOAK_DURATION:-}" ] && SETS=(--set "sim.duration=$SOAK_DURATION")

mkdir -p "$OUT"
RUN="$OUT/run"
rm -rf "$RUN"
"$BIN" run regress/soak/soak_leafspine.yaml --out "$RUN" --quiet "${SETS[@]}" &
PID=$!
SAMPLES="$OUT/rss.csv"
echo "wall_s,sim_ms,rss_kib" > "$SAMPLES"
t0=$(date +%s.%N)
while kill -0 "$PID" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status" 2>/dev/null || true)
  # The queue series is written as the run goes (queues.csv.partial until the
  # end); its last complete row is the simulated time reached, to within the
  # stdio buffer (a few rows).
  series="$RUN/queues.csv.partial"
  [ -f "$series" ] || series="$RUN/queues.csv"
  sim_ns=$(tail -n 2 "$series" 2>/dev/null | head -n 1 | cut -d, -f1 || true)
  now=$(date +%s.%N)
  if [ -n "$rss" ] && [[ "$sim_ns" =~ ^[0-9.]+$ ]]; then
    awk -v w="$now" -v t="$t0" -v s="$sim_ns" -v r="$rss" 'BEGIN {printf "%.1f,%.3f,%d\n", w - t, s / 1e6, r}' >> "$SAMPLES"
  fi
  sleep 1
done
wait "$PID"

/usr/bin/python3 - "$SAMPLES" "$WARMUP_MS" "$LIMIT" <<'EOF'
import csv, sys
path, warmup, limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows = [(float(r["sim_ms"]), int(r["rss_kib"])) for r in csv.DictReader(open(path))]
after = [(t, m) for t, m in rows if t >= warmup]
if len(after) < 5:
    sys.exit(f"soak: only {len(after)} samples after the {warmup:g} ms warm-up in {path}: too few to judge")
n = len(after)
mt = sum(t for t, _ in after) / n
mm = sum(m for _, m in after) / n
slope = sum((t - mt) * (m - mm) for t, m in after) / sum((t - mt) ** 2 for t, _ in after)  # KiB per ms simulated
base = after[0][1]
pct = slope * 100 / base * 100  # percent of the RSS at warm-up, per 100 ms simulated
lo, hi = min(m for _, m in after), max(m for _, m in after)
print(f"soak: {n} samples from {after[0][0]:.1f} to {after[-1][0]:.1f} ms simulated; RSS {base} KiB at warm-up, "
      f"{lo}..{hi} KiB after; slope {slope:.2f} KiB/ms = {pct:+.3f} % per 100 ms (limit {limit:g} %)")
sys.exit(0 if pct < limit else 1)
EOF
