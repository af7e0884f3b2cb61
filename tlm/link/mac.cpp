#include "link/mac.h"

#include "core/time.h"

namespace rocesim::link {

using namespace sc_core;

Mac::Mac(sc_module_name name, uint32_t port, const MacConfig& cfg, Ledger& ledger)
    : sc_module(name), tx("tx"), rx("rx"), tx_in("tx_in"), rx_out("rx_out"), m_ledger(ledger), m_port(port),
      m_byte_time(cfg.rate_bps), m_cfg(cfg), m_pause(cfg.rate_bps, cfg.pause_response_ps) {
  m_from_cable.mac = this;
  m_from_node.mac = this;
  tx.bind(static_cast<pkt_bw_if&>(m_from_cable));
  rx.bind(static_cast<pkt_fw_if&>(m_from_cable));
  tx_in.bind(static_cast<pkt_fw_if&>(m_from_node));
  rx_out.bind(static_cast<pkt_bw_if&>(m_from_node));
  m_tx_done_ev.bind<&Mac::on_tx_done>(this);
  m_rx_ev.bind<&Mac::on_rx>(this);
  m_pause_ev.bind<&Mac::on_pause_change>(this);
}

void Mac::end_of_elaboration() {
  // Bound by now (SystemC checks the binding before this callback).
  m_tx_if = tx.operator->();
  m_rx_out_if = rx_out.operator->();
}

void Mac::kick() {
  if (tx_busy()) want_tx_done();
  else if (!m_in_start) try_start();
}

// The end of the frame on the wire is wanted: the node has a frame, or a
// control frame waits.
void Mac::want_tx_done() {
  if (!m_tx_done_ev.armed()) m_tx_done_ev.at_as_of(m_tx_end_ps, m_tx_end_seq);
}

void Mac::set_tx_enabled(bool on) {
  m_tx_enabled = on;
  if (!on) {
    while (!m_ctrl.empty()) {
      m_ledger.drop(m_ctrl.front(), packet::DropReason::link_down);
      m_ctrl.pop_front();
    }
  } else {
    kick();
  }
}

void Mac::send_control(packet::Packet* p, bool pause) {
  if (!m_tx_enabled) {
    m_ledger.drop(p, packet::DropReason::link_down);
    return;
  }
  if (pause) ++m_stats.pause_tx;
  if (!tx_busy() && !m_in_start) {
    start(*p);
    return;
  }
  m_ctrl.push_back(p);
  if (m_tx_busy) want_tx_done();
}

uint8_t Mac::paused_mask() {
  const uint8_t m = m_pause.paused_mask(core::now_ps());
  if ((m_log || m_trace) && m_pause.has_transitions()) log_transitions();
  return m;
}

pfc::PauseReceiver::PrioStats Mac::pause_stats(int prio) { return m_pause.stats(prio, core::now_ps()); }

void Mac::log_transitions() {
  m_pause.drain_transitions([this](const pfc::PauseReceiver::Transition& t) {
    if (m_log) m_log->push_back(pfc::Event{t.t_ps, m_node, m_port, t.prio, t.paused ? "pause_start" : "pause_end"});
    // The transition's own time: with early hand-off it can be ahead of now.
    if (m_trace && m_trace->paused[t.prio] != kNoTrace) m_trace->rec->set(m_trace->paused[t.prio], t.t_ps, t.paused);
  });
}

void Mac::trace_busy(uint64_t t_ps, bool busy) { m_trace->rec->set(m_trace->busy, t_ps, busy); }

void Mac::schedule_pause_change() {
  const uint64_t now = core::now_ps();
  const uint64_t t = m_pause.next_change(now);
  if (m_log || m_trace) log_transitions();
  if (t == UINT64_MAX || t >= m_pause_ev_at) return;
  m_pause_ev_at = t;
  m_pause_ev.at(t);
}

void Mac::on_pause_change() {
  m_ledger.count_event();
  m_pause_ev_at = UINT64_MAX;
  schedule_pause_change();  // the next expiry, and log what changed
  kick();                   // a priority may have resumed
}

void Mac::try_start() {
  if (!m_tx_enabled) return;
  if (!m_ctrl.empty()) {  // control frames first, at the frame boundary
    packet::Packet* p = m_ctrl.front();
    m_ctrl.pop_front();
    start(*p);
    return;
  }
  if (!m_ready) return;
  m_in_start = true;  // the node may kick() again while answering
  m_ready->on_tx_ready(m_port);
  m_in_start = false;
}

void Mac::send(packet::Packet& p, sc_time& delay) {
  if (tx_busy() || delay != SC_ZERO_TIME) {
    SC_REPORT_ERROR("rocesim/mac", "tx_in: a frame was sent while the MAC was busy or for later");
    m_ledger.drop(&p, packet::DropReason::none);
    return;
  }
  start(p);
}

void Mac::start(packet::Packet& p) {
  const uint64_t t0 = core::now_ps();
  const uint32_t frame = p.frame_len();
  const uint64_t last_bit = m_byte_time.ps(packet::kPreambleSfdBytes + frame);
  const uint64_t busy = m_byte_time.ps(p.wire_bytes());
  m_tx_busy = true;
  if (m_trace) trace_busy(t0, true);
  ++m_stats.tx_frames;
  m_stats.tx_bytes += frame;
  m_stats.tx_busy_ps += busy;
  if (m_tx_pcap) m_tx_pcap->write(t0, p);
  // The frame's end: its order number is taken now, whether or not its
  // wake-up is armed now (a frame ending with nothing to send next needs none).
  m_tx_end_ps = t0 + busy;
  m_tx_end_seq = core::Calendar::get().take_seq();
  if (m_trace || !m_ctrl.empty() || !m_ready || m_ready->tx_pending(m_port)) m_tx_done_ev.at_as_of(m_tx_end_ps, m_tx_end_seq);
  sc_time d = core::ps(last_bit);
  tx_if()->b_transport(p, d);  // ownership passes to the cable
}

void Mac::on_tx_done() {
  m_ledger.count_event();
  m_tx_busy = false;
  if (m_trace) trace_busy(core::now_ps(), false);
  try_start();
}

bool Mac::accept(packet::Packet& p, uint64_t arrive_ps) {
  ++m_stats.rx_frames;
  m_stats.rx_bytes += p.frame_len();
  const packet::DropReason why = packet::parse(p, m_cfg.checks);
  if (why != packet::DropReason::none) {
    ++m_stats.rx_dropped;
    m_ledger.drop(&p, why);
    return false;
  }
  if (p.meta.kind == packet::FrameKind::pfc) {
    // MAC control: consumed here, never handed up (802.1Qbb).
    ++m_stats.pause_rx;
    if (m_cfg.honor_pause) {
      m_pause.on_frame(arrive_ps, p.meta.pfc.class_enable, p.meta.pfc.timers);
      schedule_pause_change();
    }
    m_ledger.deliver(&p);
    return false;
  }
  p.ingress_port = m_port;
  return true;
}

void Mac::hand_up(packet::Packet& p, uint64_t delay_ps) {
  sc_time d = core::ps(delay_ps);
  rx_out_if()->b_transport(p, d);  // ownership passes to the node
}

void Mac::arrive(packet::Packet& p, sc_time& delay) {
  const uint64_t now = core::now_ps();
  const uint64_t last = now + core::to_ps(delay);
  const uint64_t first = last - m_byte_time.ps(packet::kPreambleSfdBytes + p.frame_len());
  const uint64_t at = m_cfg.deliver_at_header
                          ? first + m_byte_time.ps(packet::kPreambleSfdBytes + p.hdr_len)
                          : last;
  p.rx_first_bit_ps = first;
  if (m_cfg.early_handoff) {
    // Same checks and counters as on arrival, done now; the node times itself.
    if (m_rx_pcap) m_rx_pcap->write(first, p);
    // A PFC frame acts from its last bit, whatever the node's hand-off point.
    if (accept(p, last)) hand_up(p, at - now);
    return;
  }
  if (m_rx_fifo.empty()) m_rx_ev.at(at);
  m_rx_fifo.push_back(Arrival{&p, at});
}

void Mac::on_rx() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_rx_fifo.empty() && m_rx_fifo.front().deliver_ps <= now) {
    packet::Packet* p = m_rx_fifo.front().p;
    m_rx_fifo.pop_front();
    if (m_rx_pcap) m_rx_pcap->write(p->rx_first_bit_ps, *p);
    const uint64_t last = p->rx_first_bit_ps + m_byte_time.ps(packet::kPreambleSfdBytes + p->frame_len());
    if (accept(*p, last)) hand_up(*p, 0);
  }
  if (!m_rx_fifo.empty()) m_rx_ev.at(m_rx_fifo.front().deliver_ps);
}

}  // namespace rocesim::link
