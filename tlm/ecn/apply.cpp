#include "ecn/apply.h"

#include "packet/build.h"

namespace rocesim::ecn {

Decision mark_packet(Marker& marker, packet::Packet& p, uint64_t queue_len) {
  const Decision d = marker.decide(queue_len, p.meta.ecn);
  if (d.mark) packet::set_ecn(p, codepoint::kCe);
  return d;
}

}  // namespace rocesim::ecn
