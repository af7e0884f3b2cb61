#!/usr/bin/env bash
# Runs one libFuzzer target for FUZZ_TIME seconds (default 30) from its seed
# corpus. usage: run.sh TARGET SEED_CORPUS WORK_DIR
# New inputs go to WORK_DIR/corpus (a scratch copy; the checked-in seeds are
# never written), crash reproducers to WORK_DIR/artifacts/. Exit status is
# libFuzzer's: 0 = no finding within the time.
set -euo pipefail
target=$1 seeds=$2 work=$3
time=${FUZZ_TIME:-30}
mkdir -p "$work/corpus" "$work/artifacts"
echo "fuzz: $(basename "$target") for ${time}s, seeds $seeds"
exec "$target" "$work/corpus" "$seeds" \
  -max_total_time="$time" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 ${FUZZ_ARGS:-}
