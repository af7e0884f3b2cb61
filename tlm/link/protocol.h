// The packet protocol: TLM-2.0 sockets whose payload is a packet::Packet.
//
// Semantics (rocesim's own protocol, not the memory-mapped base protocol):
//   b_transport(pkt, delay) hands ownership of pkt to the callee; `delay` is
//   the time from now at which the LAST bit of the frame reaches the callee.
//   The callee never calls wait(): it queues the frame and schedules itself.
// Only b_transport is used; the other interface methods report misuse.
#pragma once

#include <systemc>
#include <tlm>

#include "packet/packet.h"

namespace rocesim::link {

struct packet_protocol_types {
  using tlm_payload_type = packet::Packet;
  using tlm_phase_type = tlm::tlm_phase;
};

using pkt_fw_if = tlm::tlm_fw_transport_if<packet_protocol_types>;
using pkt_bw_if = tlm::tlm_bw_transport_if<packet_protocol_types>;
using pkt_initiator_socket = tlm::tlm_initiator_socket<32, packet_protocol_types>;
using pkt_target_socket = tlm::tlm_target_socket<32, packet_protocol_types>;

// Implements the fw interface methods the packet protocol does not use.
class PacketTargetBase : public virtual pkt_fw_if {
 public:
  tlm::tlm_sync_enum nb_transport_fw(packet::Packet&, tlm::tlm_phase&, sc_core::sc_time&) override {
    SC_REPORT_ERROR("rocesim/protocol", "nb_transport_fw is not part of the packet protocol");
    return tlm::TLM_COMPLETED;
  }
  bool get_direct_mem_ptr(packet::Packet&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(packet::Packet&) override { return 0; }
};

// Implements the bw interface for initiators of the packet protocol.
class PacketInitiatorBase : public virtual pkt_bw_if {
 public:
  tlm::tlm_sync_enum nb_transport_bw(packet::Packet&, tlm::tlm_phase&, sc_core::sc_time&) override {
    SC_REPORT_ERROR("rocesim/protocol", "nb_transport_bw is not part of the packet protocol");
    return tlm::TLM_COMPLETED;
  }
  void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
};

}  // namespace rocesim::link
