// A host with one NIC port: an open-loop RDMA WRITE sender and a receiver that
// checks PSN order and counts bytes. (The RC transport with ACKs, go-back-N and
// DCQCN replaces the sender in tb/nic/.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "link/ledger.h"
#include "link/mac.h"
#include "packet/build.h"

namespace rocesim::host {

// Per-flow record shared by the sending and receiving host; the run's outputs read it.
struct FlowRecord {
  uint32_t id = 0;
  uint32_t src = 0, dst = 0;           // host indices
  uint64_t message_bytes = 0;
  uint32_t messages = 0;
  uint64_t rate_bps = 0;
  uint64_t start_ps = 0;
  uint8_t pcp = 3, dscp = 26;          // priority (802.1Q PCP) and DSCP of its packets
  uint32_t src_qp = 0, dst_qp = 0;
  // Sender progress.
  uint64_t bytes_sent = 0;
  uint64_t packets_sent = 0;
  uint64_t wire_bytes_sent = 0;        // incl. preamble, FCS and IFG: the ideal-FCT basis
  uint64_t first_tx_ps = UINT64_MAX;
  // Receiver progress.
  uint64_t bytes_received = 0;
  uint64_t packets_received = 0;
  uint64_t psn_errors = 0;             // packets whose PSN was not the expected one
  uint64_t messages_received = 0;
  uint64_t finish_ps = UINT64_MAX;     // last bit of the last byte in; UINT64_MAX if not done
  uint64_t first_rx_ps = UINT64_MAX;   // first bit of the first packet at the receiver
  uint64_t total_bytes() const { return message_bytes * messages; }
  bool done() const { return finish_ps != UINT64_MAX; }
};

struct HostConfig {
  uint32_t index = 0;
  uint32_t ip = 0;
  packet::Mac mac = 0;
  uint32_t mtu = 1024;
  bool vlan = true;
  uint8_t pcp = 3, dscp = 26, ecn = 2;
  link::MacConfig port;
};

// Called when a flow completes at its receiver.
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_done(FlowRecord& f) = 0;
};

class Host : public sc_core::sc_module,
             public link::TxReady,
             public link::PacketTargetBase,
             public link::PacketInitiatorBase {
 public:
  link::Mac mac;
  link::pkt_initiator_socket tx_out;  // frames to mac.tx_in
  link::pkt_target_socket rx_in;      // frames from mac.rx_out

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name name, const HostConfig& cfg, link::Ledger& ledger);

  // Flows this host sends (peer_ip/peer_mac: the receiver's addresses).
  void add_send_flow(FlowRecord* f, uint32_t peer_ip, packet::Mac peer_mac);
  void add_recv_flow(FlowRecord* f);
  void set_listener(FlowListener* l) { m_listener = l; }
  // A PFC storm: from start_ps on, keep the switch port paused on `prio`
  // (XOFF with `quanta`, refreshed at half the pause time), as a NIC that
  // stopped draining does.
  void start_pause_storm(uint64_t start_ps, uint8_t prio, uint16_t quanta);

  const HostConfig& config() const { return m_cfg; }
  uint64_t unexpected_frames() const { return m_unexpected; }

  void on_tx_ready(uint32_t port) override;
  // A received, checked frame from the MAC (delay zero: it has arrived).
  void b_transport(packet::Packet& p, sc_core::sc_time& delay) override;

 private:
  struct SendState {
    FlowRecord* rec;
    uint32_t peer_ip;
    packet::Mac peer_mac;
    uint32_t msg_index = 0;
    uint64_t msg_offset = 0;
    uint32_t psn = 0;
    uint64_t next_ps = 0;              // pacing: earliest start of the next packet
    uint16_t udp_sport = 0;
  };
  struct RecvState {
    FlowRecord* rec;
    uint32_t expected_psn = 0;
    uint64_t msg_bytes = 0;
  };
  void on_wake();
  void on_storm();
  packet::Packet* make_packet(SendState& s);
  packet::Packet* next_frame();

  HostConfig m_cfg;
  link::Ledger& m_ledger;
  std::vector<SendState> m_send;
  std::vector<RecvState> m_recv;       // indexed by dst_qp - kFirstQp
  size_t m_rr = 0;                     // round-robin position among send flows
  sc_core::sc_event m_wake_ev;
  sc_core::sc_event m_storm_ev;
  uint8_t m_storm_prio = 0;
  uint16_t m_storm_quanta = 0;
  uint64_t m_wake_at = UINT64_MAX;
  FlowListener* m_listener = nullptr;
  uint64_t m_unexpected = 0;
};

inline constexpr uint32_t kFirstQp = 0x100;

}  // namespace rocesim::host
