// DCQCN notification point (NP): the per-QP CNP generator at the receiver.
// On each ECN-CE data packet of the QP the NIC calls on_ce_packet(now); it
// returns true when a CNP must be sent now. Deterministic, no SystemC: time
// is integer picoseconds from the caller, non-decreasing.
//
// Rule (Zhu et al., SIGCOMM 2015; NVIDIA min_time_between_cnps;
// REFERENCE.md "DCQCN"): at most one CNP per QP per min_time_between_cnps.
//   - The first CE packet of the QP always triggers a CNP.
//   - A later CE packet at time t triggers one iff t >= last_cnp + min
//     (t == last_cnp + min triggers: spacing exactly min is allowed).
//   - CE packets in between are suppressed (counted), and no CNP is owed for
//     them: the next CNP is sent by the first CE packet at or after
//     last_cnp + min. So consecutive CNPs are >= min apart, and a CNP goes
//     out as soon as a CE packet arrives once that is allowed.
//   - min = 0: every CE packet triggers a CNP.
//   - A time earlier than the latest seen is taken as the latest seen.
// The NVIDIA mlxconfig help text describes the spacing per port; the issue
// asks for it per QP. A NIC wanting the per-port rule keeps one DcqcnNp per
// port instead of per QP.
//
// Cost: O(1), no allocation.
#pragma once

#include <cstdint>

#include "nic/cc/dcqcn_config.h"

namespace rocesim::cc {

struct NpCounters {
  uint64_t ce_packets = 0;  // on_ce_packet() calls
  uint64_t cnps = 0;        // calls that returned true
  uint64_t suppressed = 0;  // calls that returned false
};

class DcqcnNp {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;

  explicit DcqcnNp(uint64_t min_time_between_cnps_ps) : min_ps_(min_time_between_cnps_ps) {}
  explicit DcqcnNp(const DcqcnConfig& cfg) : DcqcnNp(cfg.min_time_between_cnps_ps) {}

  // An ECN-CE packet of this QP arrived at now_ps; true: send a CNP now.
  bool on_ce_packet(uint64_t now_ps);

  uint64_t last_cnp_ps() const { return last_; }  // kNever before the first CNP
  // Earliest time a CE packet would trigger a CNP (0 before the first CNP).
  uint64_t next_allowed_ps() const;
  uint64_t min_time_between_cnps_ps() const { return min_ps_; }
  const NpCounters& counters() const { return counters_; }
  void reset() {
    last_ = kNever;
    now_ = 0;
    counters_ = NpCounters{};
  }

 private:
  uint64_t min_ps_;
  uint64_t last_ = kNever;
  uint64_t now_ = 0;
  NpCounters counters_;
};

}  // namespace rocesim::cc
