// An Ethernet MAC port: serializes frames at line rate and receives frames.
//
// Transmit: the MAC pulls its next frame from a TxSource when it is idle and
// was kicked, or when the previous frame plus its inter-frame gap has left.
// A frame starting at t0 (first bit of the preamble) occupies the wire for
//   (preamble+SFD 8 B + frame incl. FCS, at least 64 B + IFG 12 B) * 8 / rate,
// and its last bit leaves at t0 + (8 + frame) * 8 / rate. Exact to the ps.
// Receive: frames arrive through `rx`; the MAC holds them until their last bit
// has arrived, checks them with the parser (FCS, headers, ICRC) and hands good
// ones to the RxSink; bad ones are dropped with their reason.
// No process wakes unless a frame starts, ends or arrives.
#pragma once

#include <cstdint>

#include <systemc>

#include "core/ring.h"
#include "link/ledger.h"
#include "link/pcap.h"
#include "link/protocol.h"
#include "packet/parse.h"

namespace rocesim::link {

class TxSource {
 public:
  virtual ~TxSource() = default;
  // The next frame to serialize on `port` now, or nullptr when there is none
  // (the source kicks the MAC when it has one).
  virtual packet::Packet* pull_frame(uint32_t port) = 0;
};

class RxSink {
 public:
  virtual ~RxSink() = default;
  // A good frame whose last bit arrived now (or, for a MAC that delivers at
  // the header, whose headers did); its first bit arrived at first_bit_ps.
  // The sink owns the frame and must deliver, forward or drop it.
  virtual void on_frame(uint32_t port, packet::Packet* p, uint64_t first_bit_ps) = 0;

  // Early hand-off: a sink that schedules its own processing (a switch
  // pipeline, which acts a fixed number of cycles after arrival) can take
  // frames when they enter the cable instead of when they arrive, saving the
  // MAC's arrival event. `arrive_ps` is the future time at which the frame's
  // last bit (or, with deliver_at_header, its headers) arrives; the sink must
  // not act on the frame before then. Checks have already run.
  virtual bool early_handoff() const { return false; }
  virtual void on_frame_early(uint32_t port, packet::Packet* p, uint64_t first_bit_ps, uint64_t arrive_ps) {
    (void)port, (void)p, (void)first_bit_ps, (void)arrive_ps;
  }
};

struct MacConfig {
  uint64_t rate_bps = 100000000000ull;
  packet::ParseOptions checks;  // what the receive side verifies
  // Hand frames to the sink once their headers (hdr_len bytes) have arrived
  // instead of after the last bit: for cut-through switching. The checks
  // still run on the whole frame (the model has all its bytes); a real
  // cut-through switch would forward a bad frame and stomp its FCS.
  bool deliver_at_header = false;
};

struct MacStats {
  uint64_t tx_frames = 0, tx_bytes = 0;  // bytes = frame bytes incl. FCS
  uint64_t rx_frames = 0, rx_bytes = 0;
  uint64_t rx_dropped = 0;
  uint64_t tx_busy_ps = 0;               // wire time used, incl. preamble and IFG
};

class Mac : public sc_core::sc_module, public PacketTargetBase, public PacketInitiatorBase {
 public:
  pkt_initiator_socket tx;
  pkt_target_socket rx;

  SC_HAS_PROCESS(Mac);
  Mac(sc_core::sc_module_name name, uint32_t port, const MacConfig& cfg, Ledger& ledger);

  void set_source(TxSource* s) { m_source = s; }
  void set_sink(RxSink* s) { m_sink = s; }
  void set_pcap(PcapWriter* rx_cap, PcapWriter* tx_cap) { m_rx_pcap = rx_cap; m_tx_pcap = tx_cap; }

  // The source has a frame: start it now if the MAC is idle.
  void kick();
  bool tx_busy() const { return m_tx_busy; }
  uint64_t rate_bps() const { return m_cfg.rate_bps; }
  uint32_t port() const { return m_port; }
  const MacStats& stats() const { return m_stats; }
  // Frames held by this MAC (received but last bit not yet in).
  size_t frames_held() const { return m_rx_fifo.size(); }

  // Packet protocol: a frame whose last bit arrives after `delay`.
  void b_transport(packet::Packet& p, sc_core::sc_time& delay) override;

 private:
  struct Arrival {
    packet::Packet* p;
    uint64_t deliver_ps;  // last bit, or end of the headers with deliver_at_header
    uint64_t first_bit_ps;
  };
  void try_start();
  // Receive checks and counters; drops the frame (false) when it fails them.
  bool accept(packet::Packet& p);
  void on_tx_done();
  void on_rx();

  uint32_t m_port;
  MacConfig m_cfg;
  Ledger& m_ledger;
  TxSource* m_source = nullptr;
  RxSink* m_sink = nullptr;
  PcapWriter* m_rx_pcap = nullptr;
  PcapWriter* m_tx_pcap = nullptr;
  bool m_tx_busy = false;
  bool m_in_start = false;
  sc_core::sc_event m_tx_done_ev;
  sc_core::sc_event m_rx_ev;
  core::Ring<Arrival> m_rx_fifo;
  MacStats m_stats;
};

}  // namespace rocesim::link
