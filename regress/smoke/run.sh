#!/usr/bin/env bash
# Smoke runs: shipped scenarios cut short with --set sim.duration, run with
# --check-invariants. In the sanitizer build (`make debug`, build-debug) they
# run under ASan and UBSan, so a memory error, undefined behaviour or a broken
# invariant in any of the model's paths (PFC, DCQCN, RC, ECN, the watchdog,
# collectives, the leaf-spine) fails them. ctest runs one per scenario (label
# smoke); by hand: regress/smoke/run.sh [SCENARIO ...] (default: all below).
#   env ROCESIM_BIN  the rocesim binary (default build/bin/rocesim)
#       SMOKE_OUT    where the outputs go (default a temporary directory, removed)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${ROCESIM_BIN:-build/bin/rocesim}

# Simulated time per scenario: enough for traffic to reach every queue, PFC
# and ECN state in the scenario (its first pauses, marks, CNPs), short enough
# for a few seconds under the sanitizers.
declare -A DURATION=(
  [default]=1ms                  # runs to completion (stop_when_done)
  [dcqcn_two_flows]=2ms
  [single_switch_incast]=200us
  [pfc_incast]=300us
  [pfc_storm]=300us
  [pfc_deadlock]=400us
  [incast_dcqcn]=150us
  [ecn_incast]=300us
  [ecn_k_sweep]=300us
  [allreduce_ring]=1ms
  [pfc_incast_leafspine]=100us
  [websearch_leafspine]=60us
  [leafspine_permutation]=15us
)
ORDER=(default dcqcn_two_flows single_switch_incast pfc_incast pfc_storm pfc_deadlock incast_dcqcn ecn_incast
       ecn_k_sweep allreduce_ring pfc_incast_leafspine websearch_leafspine leafspine_permutation)
[ $# -gt 0 ] && ORDER=("$@")

OUT=${SMOKE_OUT:-}
CLEAN=0
if [ -z "$OUT" ]; then OUT=$(mktemp -d /tmp/rocesim-smoke-XXXXXX); CLEAN=1; fi
fail=0
for s in "${ORDER[@]}"; do
  d=${DURATION[$s]:-}
  if [ -z "$d" ]; then echo "smoke: no duration for scenario '$s'" >&2; exit 2; fi
  rm -rf "$OUT/$s"
  if "$BIN" run "configs/scenarios/$s.yaml" --out "$OUT/$s" --quiet --check-invariants --set "sim.duration=$d"; then
    echo "smoke: $s ($d) ok"
  else
    echo "smoke: $s ($d) FAILED (exit $?)" >&2
    fail=1
  fi
done
[ $CLEAN = 1 ] && rm -rf "$OUT"
exit $fail
