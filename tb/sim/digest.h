// The figures of the end-of-run table (`rocesim run` on stdout) and the
// summary.json members they come from (docs/outputs.md): computed once from
// the model after the run, so the table and summary.json cannot disagree.
// User-facing (the seed's "what users see"): throughput, FCT p50/p99 per
// traffic class and size bucket, flows completed, lossless drops. Internal:
// pause frames per tier, the first XOFF, the ECN mark ratio, peak queue and
// buffer, drops by reason, the hottest ports by peak utilization.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/fabric.h"

namespace rocesim::sim {

// FCT percentiles (nearest rank) of the completed flows of a class, overall
// or in a size bucket.
struct FctStats {
  uint64_t max_bytes = 0;   // the bucket's bound (sizes below it); UINT64_MAX: none
  uint64_t flows = 0;       // completed flows in it
  uint64_t p50_ps = 0, p99_ps = 0;  // valid when flows > 0
};

struct ClassDigest {
  std::string name;         // Sampler::class_of(tag)
  uint64_t flows = 0, completed = 0, bytes_received = 0;
  double throughput_bps = 0;  // bytes_received x 8 / sim time
  FctStats all;
  std::vector<FctStats> by_size;  // the buckets of summary.json fct.by_size
};

struct Digest {
  uint64_t sim_time_ps = 0;
  double throughput_bps = 0;  // every flow's payload received x 8 / sim time
  uint64_t flows_total = 0, flows_completed = 0;
  uint64_t lossless_drops = 0;  // headroom_overflow + pfc_watchdog (as --fail-on lossless_drops)
  std::vector<ClassDigest> classes;  // in order of each class's first flow
  struct Tier {
    std::string tier;  // "host", or a switch name without its index ("leaf", "spine", "sw", ...)
    uint64_t tx = 0, rx = 0;  // PFC frames sent / received by its MACs
  };
  std::vector<Tier> pause_by_tier;  // host first, then in order of the first switch of each tier
  Fabric::FirstXoff first_xoff;
  uint64_t ecn_seen = 0, ecn_marked = 0;
  double ecn_mark_ratio = 0;  // marked / seen (0 when nothing was seen)
  struct Queue {
    std::string node;  // empty: no switch queue held anything
    uint32_t port = 0, queue = 0;
    uint64_t bytes = 0;
  } peak_queue;
  struct Buffer {
    std::string node;  // empty: no switch
    uint64_t cells = 0, bytes = 0;
  } peak_buffer;
  std::vector<std::pair<std::string, uint64_t>> drops;  // the reasons with drops, in summary.json order
  struct Hot {
    std::string node;
    uint32_t port = 0;
    double peak_utilization = 0, tx_busy_fraction = 0;
  };
  std::vector<Hot> hottest;  // at most 3, highest peak first (ports.csv; empty without stats.interval)
};

Digest digest(const Fabric& f, const RunResult& r);
// The summary.json members (each line "  \"key\": value,\n").
std::string digest_json(const Digest& d);
// The table printed at the end of `rocesim run`; outputs: the files written, relative to dir.
std::string summary_table(const Digest& d, const Fabric& f, const RunResult& r, const std::string& dir,
                          const std::vector<std::string>& outputs);

}  // namespace rocesim::sim
