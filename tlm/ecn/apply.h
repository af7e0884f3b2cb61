// Marking a frame: the marker's decision applied to the packet layer.
#pragma once

#include <cstdint>

#include "ecn/marker.h"
#include "packet/packet.h"

namespace rocesim::ecn {

// Decide for frame p (its parsed codepoint p.meta.ecn) at the given queue
// length and, when the decision is to mark, rewrite its ECN field to CE with
// packet::set_ecn, which patches the IPv4 checksum (RFC 1624) and the FCS.
// The RoCEv2 ICRC masks the TOS byte, so it stays valid unchanged. A frame
// that is not marked is left byte for byte as it was. The caller chooses
// which frames reach the marker (the switch: IPv4 frames in an egress queue;
// anything without IPv4 has meta.ecn 0 and counts as not-ECT).
Decision mark_packet(Marker& marker, packet::Packet& p, uint64_t queue_len);

}  // namespace rocesim::ecn
