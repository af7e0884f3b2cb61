// An Ethernet MAC port: serializes frames at line rate and receives frames.
//
// Sockets (rocesim's packet protocol, link/protocol.h):
//   tx      -> cable: frames on the wire
//   rx      <- cable: frames arriving
//   tx_in   <- the node (host NIC or switch egress): the frame to send now
//   rx_out  -> the node: frames received and checked
// Transmit: when the MAC is idle and kicked, or when the previous frame plus
// its inter-frame gap has left, it tells its TxReady (the node) that it is
// ready; the node answers, synchronously, with a frame through tx_in, or not.
// A frame starting at t0 (first bit of the preamble) occupies the wire for
//   (preamble+SFD 8 B + frame incl. FCS, at least 64 B + IFG 12 B) * 8 / rate,
// and its last bit leaves at t0 + (8 + frame) * 8 / rate. Exact to the ps.
// Receive: a frame's checks (FCS, headers, ICRC) run with the parser; bad
// frames are dropped with their reason. Good frames go up through rx_out:
//   - by default when their last bit (or, with deliver_at_header, their
//     headers) has arrived, with a zero delay;
//   - with early_handoff, as soon as they enter the cable, with the delay
//     until that arrival annotated (b_transport's LT convention). A switch
//     pipeline, which acts a fixed number of cycles after arrival, schedules
//     itself from it, which saves the MAC one event per frame.
// Packet::rx_first_bit_ps carries the first bit's arrival time.
// No process wakes unless a frame starts, ends or arrives.
#pragma once

#include <cstdint>

#include <systemc>

#include "core/ring.h"
#include "core/time.h"
#include "link/ledger.h"
#include "link/pcap.h"
#include "link/protocol.h"
#include "packet/parse.h"
#include "pfc/pfc.h"
#include "trace/recorder.h"

namespace rocesim::link {

// The node behind a MAC: told when the MAC can take a frame.
class TxReady {
 public:
  virtual ~TxReady() = default;
  // The MAC on `port` is idle: send a frame through its tx_in now, if there is
  // one (otherwise kick() it later, when there is).
  virtual void on_tx_ready(uint32_t port) = 0;
  // Asked when a frame starts on `port`: whether the node may have another
  // frame to offer when it ends. If not, the MAC arms no wake-up for the
  // frame's end, and a kick() while the frame is on the wire arms it, in
  // the same order as if it had been armed when the frame started.
  virtual bool tx_pending(uint32_t /*port*/) { return true; }
};

struct MacConfig {
  uint64_t rate_bps = 100000000000ull;
  packet::ParseOptions checks;  // what the receive side verifies
  // Hand frames up once their headers (hdr_len bytes) have arrived instead of
  // after the last bit: for cut-through switching. The checks still run on
  // the whole frame (the model has all its bytes); a real cut-through switch
  // would forward a bad frame and stomp its FCS.
  bool deliver_at_header = false;
  bool early_handoff = false;   // see above
  // PFC receive side: pause frames are consumed by the MAC and pause its
  // transmit priorities after this response delay (802.1Qbb).
  bool honor_pause = true;
  uint64_t pause_response_ps = 0;
};

// Waveform signals of one MAC (docs/waveforms.md): link busy, and the paused
// state per priority (pauses received); kNoTrace for a priority not traced.
inline constexpr trace::Signal kNoTrace = 0xffffffffu;
struct MacTrace {
  trace::Recorder* rec = nullptr;
  trace::Signal busy = kNoTrace;
  trace::Signal paused[8] = {kNoTrace, kNoTrace, kNoTrace, kNoTrace, kNoTrace, kNoTrace, kNoTrace, kNoTrace};
};

struct MacStats {
  uint64_t tx_frames = 0, tx_bytes = 0;  // bytes = frame bytes incl. FCS
  uint64_t rx_frames = 0, rx_bytes = 0;
  uint64_t rx_dropped = 0;
  uint64_t tx_busy_ps = 0;               // wire time used, incl. preamble and IFG
  uint64_t pause_tx = 0, pause_rx = 0;   // PFC frames sent / received
};

class Mac : public sc_core::sc_module {
 public:
  pkt_initiator_socket tx;
  pkt_target_socket rx;
  pkt_target_socket tx_in;
  pkt_initiator_socket rx_out;

  SC_HAS_PROCESS(Mac);
  Mac(sc_core::sc_module_name name, uint32_t port, const MacConfig& cfg, Ledger& ledger);

  void set_ready(TxReady* r) { m_ready = r; }
  // Taps on the received and sent frames (captures or probes); null for none.
  void set_pcap(FrameTap* rx_cap, FrameTap* tx_cap) { m_rx_pcap = rx_cap; m_tx_pcap = tx_cap; }

  // The node has a frame: if the MAC is idle, it asks for it now.
  void kick();
  // A MAC control frame (PFC) from this MAC: it goes out ahead of queued data
  // at the next frame boundary and is not subject to pause. pause: counted in
  // pause_tx (false: another frame the node sends this way, e.g. an M-LAG
  // synchronization frame).
  void send_control(packet::Packet* p, bool pause = true);
  // Transmit enable (a link failure as the port sees it): while disabled the
  // MAC starts no frame, asks its node for none, and drops control frames
  // handed to it (link_down); the frame being sent, if any, ends as ever.
  void set_tx_enabled(bool on);
  bool tx_enabled() const { return m_tx_enabled; }
  // Priorities the peer has paused (bit p), as of now. Nodes ask when they
  // choose a frame; a frame on the wire is never cut.
  uint8_t paused_mask();
  pfc::PauseReceiver::PrioStats pause_stats(int prio);
  // Where pause transitions are logged (node name for the rows).
  void set_event_log(std::vector<pfc::Event>* log, const char* node) { m_log = log; m_node = node; }
  // Waveforms (null: off, the default; then each hook costs one branch).
  void set_trace(const MacTrace* t) { m_trace = t; }
  // A frame (and its IFG) is on the wire: until its end's wake-up has run, or
  // would have run had it been armed.
  bool tx_busy() {
    if (m_tx_busy && !m_tx_done_ev.armed() && core::passed(m_tx_end_ps, m_tx_end_seq)) m_tx_busy = false;
    return m_tx_busy;
  }
  uint64_t rate_bps() const { return m_cfg.rate_bps; }
  uint32_t port() const { return m_port; }
  const MacStats& stats() const { return m_stats; }
  // Frames held by this MAC (on their way in, not yet handed up).
  size_t frames_held() const { return m_rx_fifo.size() + m_ctrl.size(); }

 private:
  // Interface objects of the four sockets.
  struct FromCable : PacketTargetBase, PacketInitiatorBase {
    Mac* mac = nullptr;
    void b_transport(packet::Packet& p, sc_core::sc_time& delay) override { mac->arrive(p, delay); }
  };
  struct FromNode : PacketTargetBase, PacketInitiatorBase {
    Mac* mac = nullptr;
    void b_transport(packet::Packet& p, sc_core::sc_time& delay) override { mac->send(p, delay); }
  };
  struct Arrival {
    packet::Packet* p;
    uint64_t deliver_ps;  // last bit, or end of the headers with deliver_at_header
  };
  void arrive(packet::Packet& p, sc_core::sc_time& delay);
  void send(packet::Packet& p, sc_core::sc_time& delay);
  void try_start();
  void on_tx_done();
  void want_tx_done();
  void on_rx();
  void on_pause_change();
  void start(packet::Packet& p);
  void schedule_pause_change();
  void log_transitions();
  // Waveforms: busy changes (out of line and cold, so the hot path keeps one branch).
  [[gnu::cold, gnu::noinline]] void trace_busy(uint64_t t_ps, bool busy);
  // Receive checks and counters; drops the frame (false) when it fails them.
  // A PFC frame is consumed here (false): its last bit arrives at arrive_ps.
  bool accept(packet::Packet& p, uint64_t arrive_ps);
  void hand_up(packet::Packet& p, uint64_t delay_ps);
  void end_of_elaboration() override;
  pkt_fw_if* tx_if() { return m_tx_if ? m_tx_if : tx.operator->(); }
  pkt_fw_if* rx_out_if() { return m_rx_out_if ? m_rx_out_if : rx_out.operator->(); }

  // Members in the order a frame uses them (a large run is memory-bound):
  // what every frame reads or writes first, a few cache lines together, the
  // rest after. The sockets' bound interfaces are cached here at the end of
  // elaboration (the same pointers tx-> and rx_out-> return), so a frame does
  // not read the socket objects.
  Ledger& m_ledger;
  TxReady* m_ready = nullptr;
  pkt_fw_if* m_tx_if = nullptr;      // tx's interface (the cable)
  pkt_fw_if* m_rx_out_if = nullptr;  // rx_out's interface (the node)
  FrameTap* m_rx_pcap = nullptr;
  FrameTap* m_tx_pcap = nullptr;
  const MacTrace* m_trace = nullptr;
  std::vector<pfc::Event>* m_log = nullptr;
  uint32_t m_port;
  bool m_tx_enabled = true;
  bool m_tx_busy = false;
  bool m_in_start = false;
  core::ByteTime m_byte_time;
  uint64_t m_tx_end_ps = 0, m_tx_end_seq = 0;  // when, and its order among same-time wake-ups
  MacConfig m_cfg;
  MacStats m_stats;
  core::Timer m_tx_done_ev;  // the frame and its IFG have left (armed only when wanted)
  core::Ring<packet::Packet*> m_ctrl{4};
  FromCable m_from_cable;
  FromNode m_from_node;
  pfc::PauseReceiver m_pause;
  core::Ring<Arrival> m_rx_fifo;
  core::Timer m_rx_ev;       // the oldest arrival is due
  core::Timer m_pause_ev;    // a pause expires or takes effect
  uint64_t m_pause_ev_at = UINT64_MAX;
  const char* m_node = "";
};

}  // namespace rocesim::link
