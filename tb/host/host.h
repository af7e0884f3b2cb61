// A host with one NIC port (or two in a LAG: a dual-homed M-LAG host)
// running RDMA WRITE flows, each on its own queue pair, in one of two
// transports:
//   rc:        RoCEv2 Reliable Connection: CM REQ/REP/RTU to QP1 before data,
//              PSNs, AckReq at message end and every ack_every packets,
//              coalesced ACKs, NAK (PSN sequence error) on a gap and go-back-N
//              at the sender, a retransmission timeout, a limit on
//              outstanding packets; CNPs for CE-marked packets.
//   open_loop: the sender paces packets at its rate and never waits; the
//              receiver counts bytes and PSN errors (no ACKs).
// Several QPs share the port round-robin (byte-fair at equal rates); each is
// paced at its own rate. With two ports (HostConfig::ports, a LAG) each QP,
// requester or responder, is hashed onto one port by its own ids (lag_port()):
// its frames, data and control (ACK/NAK, CNP, CM) alike, go out there, each
// port with its own round robin, control queue and PFC state; frames are
// received on either port. A receive-buffer XOFF/XON or a storm goes out on
// every port (both feed the one buffer). Paused priorities (PFC) wait. The
// RC rules (PSNs, ACK/NAK, go-back-N, timeout, CM) are the pure block
// tb/nic/rc; this class
// builds and sends the frames it decides on, and holds the port arbitration,
// pacing, the receive buffer, DCQCN's timers and storm injection.
// Per-packet work does not grow with the number of QPs: the round robin
// visits only QPs that may send (flows not yet started wait in a heap by
// start time), the timeout visits only QPs with a timer running, and DCQCN's
// timers are a heap by due time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>

#include "link/ledger.h"
#include "core/ring.h"
#include "link/mac.h"
#include "nic/cc/dcqcn_np.h"
#include "nic/cc/dcqcn_rp.h"
#include "nic/rc/rc_qp.h"
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
  bool send = false;                   // SEND messages instead of RDMA WRITE
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
  // RC transport.
  uint64_t retransmitted = 0;          // data packets sent again (go-back-N, timeout)
  uint64_t timeouts = 0;
  uint64_t naks_received = 0;
  uint64_t naks_sent = 0;              // receiver: NAKs (PSN sequence error) it sent for this flow's data
  // Requester RTT (issue 14: what in-switch analytics is checked against):
  // a request (a first transmission carrying AckReq: a message's last packet
  // or every ack_every-th) sent at t, sampled when the first ACK covering its
  // PSN arrives (ACK p covers <= p, NAK p covers < p), minus t. Karn's rule:
  // a go-back (NAK, timeout) drops the requests still waiting; at most
  // kRttPending wait at a time (more are not sampled).
  uint64_t rtt_samples = 0;
  uint64_t rtt_sum_ps = 0;
  uint64_t cnps_received = 0, cnps_sent = 0;
  uint64_t acked_ps = UINT64_MAX;      // sender saw the last byte acknowledged
  // RC connection setup (hosts.cm): CM REQs sent again after hosts.rto
  // without a REP, and when the sender's REP arrived (the QP established;
  // UINT64_MAX before, or without CM).
  uint64_t cm_retries = 0;
  uint64_t setup_done_ps = UINT64_MAX;
  uint64_t total_bytes() const { return message_bytes * messages; }
  bool done() const { return finish_ps != UINT64_MAX; }
};

// The UDP source port of a flow's connection (its ECMP entropy), carried by
// every frame of it both ways: data, ACK/NAK/CNP and CM MADs. The fabric's
// ideal-FCT path hashes the same key the switches see.
uint16_t connection_udp_sport(const FlowRecord& f);

// The port of a LAG of `ports` ports that QP `qp` of host `host` sends on: a
// hash of the QP's own ids (0 with one port). The two ends of a connection
// choose independently, so its two directions may leave through different
// M-LAG members.
uint32_t lag_port(uint32_t host, uint32_t qp, uint32_t ports);

struct HostConfig {
  uint32_t index = 0;
  uint32_t ip = 0;
  packet::Mac mac = 0;
  uint32_t ports = 1;                  // 2: a LAG of two ports (dual-homed to an M-LAG pair)
  uint32_t mtu = 1024;
  bool vlan = true;
  uint8_t pcp = 3, dscp = 26, ecn = 2;
  link::MacConfig port;
  // Transport.
  bool rc = false;                     // RC transport; else open loop
  bool cm = true;                      // RC: connection setup with CM MADs before data
  uint32_t ack_every = 16;             // RC: AckReq / ACK coalescing, packets
  uint32_t max_outstanding = 1024;     // RC: packets sent and not acknowledged
  uint64_t rto_ps = 4194304000;        // RC: retransmission timeout: IBTA local ACK timeout 10 (4.096 us x 2^10)
  uint8_t cnp_pcp = 6, cnp_dscp = 48;  // CNPs go out on priority 6 / DSCP 48
  uint64_t min_time_between_cnps_ps = 4000000;  // NP: at most one CNP per QP per this (NVIDIA 4 us)
  // Congestion control of the RC senders: none (line rate, PFC only) or DCQCN.
  bool dcqcn = false;
  cc::DcqcnConfig dcqcn_cfg;            // line rate is set per host from its port
  // Receive buffer: frames wait in a buffer of rx_buffer_bytes drained at
  // rx_drain_bps (e.g. PCIe or host memory); 0 = frames are processed as they
  // arrive. With rx_pfc the NIC pauses its switch port (the frame's priority)
  // when the buffer reaches rx_xoff_bytes and resumes at rx_xon_bytes. While
  // a priority stays XOFF, its XOFF (timer pause_quanta) is re-sent every
  // rx_refresh_ps after the XOFF transition: t0 + k x period exactly, timed
  // from the decision (a frame on the wire delays the pause frame, not the
  // schedule); 0 = half the pause time at the port's speed, floor(ceil(quanta
  // x 512 bit times in ps) / 2), as the switch's refresh. An XON ends the
  // schedule; the next XOFF transition starts a new one.
  uint64_t rx_buffer_bytes = 0;
  uint64_t rx_drain_bps = 0;
  bool rx_pfc = true;
  uint64_t rx_xoff_bytes = 0, rx_xon_bytes = 0;
  uint16_t pause_quanta = 0xffff;
  uint64_t rx_refresh_ps = 0;
};

// One row of cc.csv: a DCQCN reaction point's state after an event.
struct CcSample {
  uint32_t flow;
  cc::RpSample s;
};

// Waveform signals of a host (docs/waveforms.md): the DCQCN rate (RC, bits/s)
// of each flow it sends, indexed by flow id (link::kNoTrace for others); its
// port's busy and paused signals are the MAC's (link::MacTrace).
struct HostTrace {
  trace::Recorder* rec = nullptr;
  std::vector<trace::Signal> flow_rate;
};

// Called when a flow completes at its receiver.
class Host;
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_done(FlowRecord& f) = 0;
  // A frame marked Packet::traced (stats.packet_trace) reached host h: its
  // last bit is in now.
  virtual void on_traced_rx(const Host& /*h*/, const packet::Packet& /*p*/) {}
};

class Host : public sc_core::sc_module,
             public link::TxReady,
             public link::PacketTargetBase,
             public link::PacketInitiatorBase {
 public:
  link::Mac mac;                      // port 0
  link::pkt_initiator_socket tx_out;  // frames to mac.tx_in
  link::pkt_target_socket rx_in;      // frames from mac.rx_out

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name name, const HostConfig& cfg, link::Ledger& ledger);

  // Flows this host sends (peer_ip/peer_mac: the receiver's addresses).
  // A blocked flow waits for release_flow() (its dependencies, e.g. the
  // previous step of a collective); its start_ps is then the earliest start.
  void add_send_flow(FlowRecord* f, uint32_t peer_ip, packet::Mac peer_mac, bool blocked = false);
  void release_flow(FlowRecord* f);
  void add_recv_flow(FlowRecord* f, uint32_t peer_ip, packet::Mac peer_mac);
  void set_listener(FlowListener* l) { m_listener = l; }
  // Where DCQCN rate/target/alpha changes are logged (cc.csv).
  void set_cc_log(std::vector<CcSample>* log) { m_cc_log = log; }
  // Waveforms (null: off): every DCQCN rate change of the flows this host
  // sends, at its time; the flows' rates now are recorded at once. After the
  // flows are added, before run().
  void set_trace(const HostTrace* t);
  // A PFC storm: from start_ps on, keep the switch port paused on `prio`
  // (XOFF with `quanta`, refreshed at half the pause time), as a NIC that
  // stopped draining does.
  void start_pause_storm(uint64_t start_ps, uint8_t prio, uint16_t quanta);

  const HostConfig& config() const { return m_cfg; }
  uint32_t num_ports() const { return m_mac1 ? 2 : 1; }
  // The MAC of port p < num_ports() (port 0 is `mac`).
  link::Mac& port_mac(uint32_t p) { return p ? *m_mac1 : mac; }
  const link::Mac& port_mac(uint32_t p) const { return p ? *m_mac1 : mac; }
  uint64_t unexpected_frames() const { return m_unexpected; }
  // Where this NIC logs the XOFF/XON transitions it sends (receive buffer, storm).
  void set_event_log(std::vector<pfc::Event>* log) { m_log = log; }
  uint64_t rx_buffer_drops() const { return m_rx_drops; }
  uint64_t rx_buffer_peak() const { return m_rx_peak; }
  // Bytes (frames incl. FCS) in the receive buffer now.
  uint64_t rx_buffer_level() const { return m_rx_bytes; }
  // XOFF frames the receive buffer re-sent while a priority stayed XOFF.
  uint64_t rx_refreshes() const { return m_rx_refreshes; }
  // Frames this host holds: its MAC's, and control frames waiting to be sent.
  size_t frames_held() const {
    return mac.frames_held() + (m_mac1 ? m_mac1->frames_held() : 0) + m_ctrl[0].size() + m_ctrl[1].size() +
           m_rxq.size();
  }
  // RC progress of one flow's QP, for the invariant checker (sim/invariants.h).
  // Receiver: packets accepted in PSN order (the next expected packet index).
  // Sender: packets sent at least once, and acknowledged. False if this host
  // is not that end of the flow.
  bool rc_received(const FlowRecord& f, uint64_t& next_index) const;
  bool rc_sent(const FlowRecord& f, uint64_t& high_sent, uint64_t& acked) const;

  void on_tx_ready(uint32_t port) override;
  // A received, checked frame from the MAC (delay zero: it has arrived).
  void b_transport(packet::Packet& p, sc_core::sc_time& delay) override;

 private:
  // Packets are numbered 0..total_pkts-1 within a flow; PSN = index mod 2^24.
  struct SendState {
    SendState(FlowRecord* r, uint32_t ip, packet::Mac mac, uint32_t packets_per_message, const rc::RcRequester& q)
        : rec(r), peer_ip(ip), peer_mac(mac), ppm(packets_per_message), qp(q) {}
    FlowRecord* rec;
    uint32_t peer_ip;
    packet::Mac peer_mac;
    uint32_t ppm = 1;                  // packets per message
    rc::RcRequester qp;                // RC requester (open loop: its packet sequence only)
    uint64_t next_ps = 0;              // pacing: earliest start of the next packet
    bool blocked = false;              // waits for release_flow()
    bool active = false;               // in m_active
    bool timed = false;                // in m_timed
    uint64_t deficit = 0;              // DRR among QPs: payload bytes this QP may still send
    uint16_t udp_sport = 0;
    uint32_t port = 0;                 // LAG port (lag_port())
    uint64_t cc_key = rc::kNever;      // rp->next_event_ps() as last put in m_cc_heap
    // Requests waiting for their ACK (FlowRecord::rtt_*), oldest first: a ring.
    static constexpr uint32_t kRttPending = 8;
    uint64_t rtt_index[kRttPending] = {};
    uint64_t rtt_sent_ps[kRttPending] = {};
    uint32_t rtt_head = 0, rtt_n = 0;
    std::unique_ptr<cc::DcqcnRp> rp;   // DCQCN reaction point (with cc: dcqcn)
  };
  struct RecvState {
    FlowRecord* rec = nullptr;
    uint32_t peer_ip = 0;
    packet::Mac peer_mac = 0;
    uint16_t udp_sport = 0;
    uint32_t port = 0;                 // LAG port (lag_port())
    rc::RcResponder rx;                // RC responder
    uint32_t expected_psn = 0;         // open loop: next expected PSN
    cc::DcqcnNp np{0};                 // notification point: CNP pacing per QP
  };
  using TimedIndex = std::pair<uint64_t, uint32_t>;  // (time, index into m_send), min-heaps below
  void on_wake();
  void on_storm();
  void on_rto();
  void on_cc();
  void on_drain();
  void on_rx_refresh();
  void process(packet::Packet* p);
  // One PFC frame for `prio` with this timer, on every port.
  void send_pause(uint8_t prio, uint16_t quanta);
  // The receive buffer's PFC frame for `prio` (timer pause_quanta for XOFF, 0 for XON).
  void rx_pause(uint8_t prio, bool xoff);
  // An XOFF or XON transition of the receive buffer on `prio`.
  void rx_transition(uint8_t prio, bool xoff);
  void arm_rx_refresh(uint64_t t_ps);
  void arm_cc();
  // After a call into s's reaction point: its next timer into m_cc_heap.
  void cc_update(uint32_t i);
  rc::RcConfig rc_config() const;
  // An unblocked flow: into m_starts until its start, else m_active.
  void start_qp(uint32_t i);
  // QP i may send (again): into m_active, in index order.
  void activate(uint32_t i);
  // QP i has a timer running (REQ repeat or data): into m_timed.
  void time_qp(uint32_t i);
  static void log_rp(void* ctx, const cc::RpSample& s);
  packet::Packet* make_packet(SendState& s, const rc::TxPacket& tx);
  uint32_t payload_of(const SendState& s, uint64_t idx) const;
  // Ethernet and IPv4 fields of a frame from this NIC to a peer.
  void headers(packet::EthSpec& eth, packet::Ipv4Spec& ip, packet::Mac peer_mac, uint32_t peer_ip, uint8_t pcp,
               uint8_t dscp, uint8_t ecn) const;
  packet::Packet* next_frame(uint32_t port);
  // RC control frames (ACK/NAK, CNP, CM) go out ahead of data, on their QP's port.
  void queue_ctrl(packet::Packet* p, uint32_t port);
  void kick_all();
  void send_ack(RecvState& r, uint32_t psn, uint8_t syndrome);
  void send_cnp(RecvState& r);
  void send_cm(uint16_t attr, const FlowRecord& f, uint32_t peer_ip, packet::Mac peer_mac, bool from_sender,
               uint32_t port);
  void on_data(RecvState& st, const packet::Meta& m);
  void on_ack(const packet::Meta& m);
  void on_cm(const packet::Meta& m);
  void arm_rto(uint64_t t_ps);
  void flow_received(FlowRecord& r);

  HostConfig m_cfg;
  link::Ledger& m_ledger;
  std::vector<SendState> m_send;
  std::vector<RecvState> m_recv;       // indexed by dst_qp - kFirstQp
  std::vector<int> m_send_by_qp;       // src_qp - kFirstQp -> index into m_send, or -1
  std::unordered_map<uint32_t, uint32_t> m_send_by_flow, m_recv_by_flow;  // flow id -> m_send / m_recv index (CM)
  // The QPs next_frame() visits, ascending: started, not blocked, with a
  // packet to send or a connection to set up. A QP leaves when it has
  // nothing left (found by the scan) and comes back on a go-back.
  std::vector<uint32_t> m_active;
  std::vector<TimedIndex> m_starts;    // unblocked flows not started yet, by start time
  std::vector<uint32_t> m_timed;       // QPs that may have a timer running (on_rto visits only these)
  // DCQCN: (rp->next_event_ps(), index) of each QP with a timer pending, and
  // stale entries (key no longer the QP's cc_key) dropped when they surface.
  std::vector<TimedIndex> m_cc_heap;
  std::vector<uint32_t> m_due;         // on_cc: the QPs due now
  core::Ring<packet::Packet*> m_ctrl[2] = {core::Ring<packet::Packet*>{16}, core::Ring<packet::Packet*>{16}};  // per port
  core::Timer m_rto_ev;
  core::Timer m_cc_ev;
  uint64_t m_cc_at = UINT64_MAX;
  std::vector<CcSample>* m_cc_log = nullptr;
  const HostTrace* m_trace = nullptr;
  // Receive buffer.
  core::Ring<packet::Packet*> m_rxq{16};
  uint64_t m_rx_bytes = 0, m_rx_peak = 0, m_rx_drops = 0;
  uint8_t m_rx_xoff = 0;                // priorities this NIC has paused
  bool m_draining = false;
  core::Timer m_drain_ev, m_rx_refresh_ev;
  uint64_t m_rx_refresh_period_ps = 0;
  uint64_t m_rx_refresh_at[8];          // per priority: next XOFF refresh, UINT64_MAX = none
  uint64_t m_rx_refresh_ev_at = UINT64_MAX;  // when m_rx_refresh_ev fires (UINT64_MAX: not pending)
  uint64_t m_rx_refreshes = 0;
  std::vector<std::unique_ptr<std::pair<Host*, uint32_t>>> m_rp_ctx;
  uint64_t m_rto_at = UINT64_MAX;
  size_t m_rr[2] = {0, 0};             // per port: round-robin position among send flows
  // Port 1 of a LAG (null with one port), and its sockets.
  std::unique_ptr<link::Mac> m_mac1;
  std::unique_ptr<link::pkt_initiator_socket> m_tx_out1;
  std::unique_ptr<link::pkt_target_socket> m_rx_in1;
  core::Timer m_wake_ev;
  core::Timer m_storm_ev;
  uint8_t m_storm_prio = 0;
  uint16_t m_storm_quanta = 0;
  bool m_storm_started = false;
  std::vector<pfc::Event>* m_log = nullptr;  // pfc.csv rows: the XOFF/XON transitions this NIC sends
  uint64_t m_wake_at = UINT64_MAX;
  FlowListener* m_listener = nullptr;
  uint64_t m_unexpected = 0;
};

inline constexpr uint32_t kFirstQp = 0x100;

}  // namespace rocesim::host
