#include "sched/config.h"

#include <limits>
#include <sstream>

namespace rocesim::sched {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::strict:
      return "strict";
    case Mode::dwrr:
      return "dwrr";
  }
  return "?";
}

PortConfig PortConfig::strict_priority() {
  PortConfig p;
  for (QueueConfig& q : p.queues) q.mode = Mode::strict;
  return p;
}

PortConfig PortConfig::roce_default() {
  PortConfig p;
  for (unsigned q = 0; q < kQueues; ++q) {
    QueueConfig& qc = p.queues[q];
    qc.mode = q >= 6 ? Mode::strict : Mode::dwrr;
    qc.quantum_bytes = q >= 6 ? 0 : p.max_frame_bytes;
  }
  return p;
}

uint32_t quantum_for_weight(uint32_t weight, uint32_t base_quantum_bytes) {
  const uint64_t q = uint64_t(weight) * base_quantum_bytes;
  return q > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max() : uint32_t(q);
}

void set_dwrr_weights(PortConfig& port, const std::array<uint32_t, kQueues>& weights, uint32_t base_quantum_bytes) {
  for (unsigned q = 0; q < kQueues; ++q) {
    if (weights[q] == 0) continue;
    port.queues[q].mode = Mode::dwrr;
    port.queues[q].quantum_bytes = quantum_for_weight(weights[q], base_quantum_bytes);
  }
}

namespace {

void check_shaper(const ShaperConfig& s, uint32_t max_frame, const std::string& who, std::vector<std::string>& out) {
  if (!s.enabled()) {
    if (s.burst_bytes != 0) out.push_back(who + ": shaper burst_bytes " + std::to_string(s.burst_bytes) + " without a rate");
    return;
  }
  if (s.rate_bps > kMaxRateBps)
    out.push_back(who + ": shaper rate_bps " + std::to_string(s.rate_bps) + " exceeds " + std::to_string(kMaxRateBps));
  if (s.burst_bytes < max_frame)
    out.push_back(who + ": shaper burst_bytes " + std::to_string(s.burst_bytes) + " is below max_frame_bytes " +
                  std::to_string(max_frame) + " (the largest frame could never conform)");
  if (s.burst_bytes > kMaxBurstBytes)
    out.push_back(who + ": shaper burst_bytes " + std::to_string(s.burst_bytes) + " exceeds " +
                  std::to_string(kMaxBurstBytes));
}

}  // namespace

std::vector<std::string> validate(const PortConfig& port) {
  std::vector<std::string> out;
  if (port.max_frame_bytes == 0) out.push_back("max_frame_bytes must be > 0");
  for (unsigned q = 0; q < kQueues; ++q) {
    const QueueConfig& qc = port.queues[q];
    const std::string who = "queue " + std::to_string(q);
    if (qc.mode != Mode::strict && qc.mode != Mode::dwrr) {
      out.push_back(who + ": unknown mode " + std::to_string(static_cast<int>(qc.mode)));
      continue;
    }
    if (qc.mode == Mode::dwrr && qc.quantum_bytes < port.max_frame_bytes)
      out.push_back(who + ": DWRR quantum_bytes " + std::to_string(qc.quantum_bytes) + " is below max_frame_bytes " +
                    std::to_string(port.max_frame_bytes) + " (a turn must be able to send the largest frame)");
    check_shaper(qc.shaper, port.max_frame_bytes, who, out);
  }
  check_shaper(port.shaper, port.max_frame_bytes, "port", out);
  return out;
}

}  // namespace rocesim::sched
