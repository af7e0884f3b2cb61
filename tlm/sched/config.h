// Egress scheduler configuration for one port: 8 queues, each strict
// priority or a member of the DWRR group with a quantum in bytes, an optional
// token-bucket shaper per queue and one per port. Plain structs (no YAML):
// the scenario reader fills them and calls validate() before building a
// Scheduler.
//
// Units: bytes are whatever the caller charges per frame (the switch passes
// the frame length); rates are bits per second; time is integer picoseconds.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::sched {

inline constexpr unsigned kQueues = 8;  // egress queues per port

// Shaper limits that keep the token arithmetic exact in 64-bit integers
// (tokens are held in units of 1/(8e12) byte, see shaper.h).
inline constexpr uint64_t kMaxRateBps = 10'000'000'000'000ull;  // 10 Tbps
inline constexpr uint32_t kMaxBurstBytes = 1u << 20;            // 1 MiB

enum class Mode : uint8_t {
  strict,  // served before every DWRR queue; among strict queues the higher index wins
  dwrr,    // deficit weighted round robin among the non-strict queues
};
const char* mode_name(Mode m);  // "strict" | "dwrr"

// Token bucket (rate, burst). Disabled when rate_bps == 0. A frame of b bytes
// may start when the bucket holds >= b bytes of tokens; it then takes b. The
// bucket starts full and holds at most burst_bytes, so burst_bytes must be
// at least the largest frame (validate()).
struct ShaperConfig {
  uint64_t rate_bps = 0;     // 0 = no shaper
  uint32_t burst_bytes = 0;  // bucket depth
  bool enabled() const { return rate_bps != 0; }
};

struct QueueConfig {
  Mode mode = Mode::strict;
  // DWRR only: bytes added to the queue's deficit at the start of each of its
  // turns; the queues' byte shares are proportional to their quanta. Must be
  // >= PortConfig::max_frame_bytes so that every turn sends at least one
  // frame (Shreedhar & Varghese's condition for O(1) work per frame).
  uint32_t quantum_bytes = 0;
  ShaperConfig shaper;
};

struct PortConfig {
  std::array<QueueConfig, kQueues> queues{};  // default: all strict (the switch's historical behaviour)
  ShaperConfig shaper;                        // whole port, applied after the queue choice
  // Largest head_bytes the caller will present (9216: a common jumbo MTU).
  // Quanta and shaper bursts are checked against it.
  uint32_t max_frame_bytes = 9216;

  // All 8 queues strict priority (7 highest).
  static PortConfig strict_priority();
  // RoCE default (issue 5): queues 6 and 7 strict (CNP on 6), queues 0-5 DWRR
  // with equal quanta of max_frame_bytes (RoCE data on 3, the rest on 0).
  static PortConfig roce_default();
};

// Quantum for a DWRR weight: weight * base_quantum_bytes. Choose
// base_quantum_bytes >= max_frame_bytes (e.g. weights 1:2:5 with a 1500-B
// base give 1500, 3000, 7500) so that a queue can send after one turn.
// Saturates at UINT32_MAX (validate() then reports nothing wrong with it, but
// such a quantum is meaningless; keep weights small).
uint32_t quantum_for_weight(uint32_t weight, uint32_t base_quantum_bytes);
// Makes queue q DWRR with quantum_for_weight(weights[q], base) for every q
// with weights[q] > 0; queues with weight 0 are left as they are.
void set_dwrr_weights(PortConfig& port, const std::array<uint32_t, kQueues>& weights, uint32_t base_quantum_bytes);

// Every problem found, one line each naming the queue and the numbers; empty
// when the configuration is usable. Checked: max_frame_bytes > 0; a DWRR
// quantum >= max_frame_bytes; shaper rate <= kMaxRateBps, burst in
// [max_frame_bytes, kMaxBurstBytes] when the shaper is enabled, and no burst
// without a rate.
std::vector<std::string> validate(const PortConfig& port);

}  // namespace rocesim::sched
