#include "nic/cc/dcqcn_np.h"

namespace rocesim::cc {

uint64_t DcqcnNp::next_allowed_ps() const {
  if (last_ == kNever) return 0;
  return min_ps_ > kNever - last_ ? kNever : last_ + min_ps_;
}

bool DcqcnNp::on_ce_packet(uint64_t now_ps) {
  if (now_ps > now_) now_ = now_ps;
  ++counters_.ce_packets;
  if (last_ != kNever && now_ < next_allowed_ps()) {
    ++counters_.suppressed;
    return false;
  }
  last_ = now_;
  ++counters_.cnps;
  return true;
}

}  // namespace rocesim::cc
