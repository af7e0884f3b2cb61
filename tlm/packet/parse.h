// Parser: bytes -> Meta. Never reads past the bytes it is given.
#pragma once

#include <cstddef>
#include <cstdint>

#include "packet/packet.h"

namespace rocesim::packet {

struct ParseOptions {
  bool check_fcs = true;    // verify p.fcs against the frame's bytes
  bool check_icrc = true;   // verify the RoCEv2 ICRC
};

// Parse p's bytes into p.meta. Returns DropReason::none on success.
DropReason parse(Packet& p, const ParseOptions& opt = {});

// Parse a raw frame without FCS (as in a pcap record): bytes [0, len).
// Does not check an FCS. Fills meta; returns the reason on failure.
DropReason parse_bytes(const uint8_t* bytes, size_t len, Meta& meta, bool check_icrc = true);

}  // namespace rocesim::packet
