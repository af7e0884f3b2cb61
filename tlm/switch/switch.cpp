#include "switch/switch.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "packet/build.h"

namespace rocesim::sw {

using namespace sc_core;
namespace pk = rocesim::packet;

namespace {

pk::DropReason drop_reason(mmu::Verdict v) {
  switch (v) {
    case mmu::Verdict::drop_ingress_limit: return pk::DropReason::ingress_limit;
    case mmu::Verdict::drop_egress_limit: return pk::DropReason::egress_limit;
    case mmu::Verdict::drop_pool_full: return pk::DropReason::pool_full;
    case mmu::Verdict::drop_headroom_overflow: return pk::DropReason::headroom_overflow;
    default: return pk::DropReason::none;
  }
}

buffer::BufferConfig with_clock(buffer::BufferConfig b, uint64_t period) {
  b.clock_period_ps = period;
  return b;
}

// PFC priorities each PG pauses (the priorities' traffic classes' PGs).
std::array<uint8_t, 8> pg_prios_of(const SwitchConfig& cfg) {
  std::array<uint8_t, 8> a{};
  for (int p = 0; p < 8; ++p)
    if (cfg.pfc.priorities >> p & 1) a[cfg.qos.tc_to_pg[cfg.qos.pcp_to_tc[p] & 7] & 7] |= static_cast<uint8_t>(1u << p);
  return a;
}

qm::Config qm_config(const SwitchConfig& cfg) {
  qm::Config c;
  c.mmu = cfg.mmu;
  c.ecn = cfg.ecn;
  c.pfc_enabled = cfg.pfc.enabled;
  const std::array<uint8_t, 8> prios = pg_prios_of(cfg);
  for (int g = 0; g < 8; ++g)
    if (prios[g]) c.pfc_pgs |= static_cast<uint8_t>(1u << g);
  c.pfc = cfg.pfc.gen;
  return c;
}

uint32_t mix32(uint32_t h) {  // murmur3 fmix32: full avalanche of the 5-tuple
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace

Switch::Switch(sc_module_name name, const SwitchConfig& cfg, const RouteLookup& routes, link::Ledger& ledger)
    : sc_module(name),
      buf_isck("buf_isck"),
      buffer("buffer", with_clock(cfg.buffer, cfg.clock_period_ps)),
      rx_in("rx_in", cfg.port_rates.size()),
      tx_out("tx_out", cfg.port_rates.size()),
      m_cfg(cfg),
      m_routes(routes),
      m_ledger(ledger),
      m_qm_model(qm_config(cfg)) {
  const size_t n = cfg.port_rates.size();
  if (cfg.mmu.ports.size() != n) throw std::invalid_argument("MMU configuration has a different number of ports");
  buf_isck.bind(buffer.tsck);
  m_links.qm = m_qm;
  buffer.set_links(&m_links);
  for (size_t i = 0; i < n; ++i) m_port_if.push_back(std::make_unique<PortIf>());
  m_slot = core::ZeroArray<Slot>(cfg.mmu.total_cells);
  m_staged.resize(n);
  m_qstats.resize(n * 8);
  m_pgstats.resize(n * 8);
  m_wake_at.assign(n, UINT64_MAX);
  for (uint64_t r : cfg.port_rates) m_byte_time.emplace_back(r);
  for (size_t i = 0; i < n; ++i) {
    link::MacConfig mc;
    mc.rate_bps = cfg.port_rates[i];
    mc.checks = cfg.checks;
    mc.deliver_at_header = cfg.cut_through;
    mc.early_handoff = true;
    mc.honor_pause = true;
    mc.pause_response_ps = cfg.pfc.response_ps;
    ports.push_back(std::make_unique<link::Mac>(("p" + std::to_string(i)).c_str(), static_cast<uint32_t>(i), mc, ledger));
    m_port_if[i]->sw = this;
    m_port_if[i]->port = static_cast<uint32_t>(i);
    rx_in[i].bind(static_cast<link::pkt_fw_if&>(*m_port_if[i]));
    tx_out[i].bind(static_cast<link::pkt_bw_if&>(*m_port_if[i]));
    ports[i]->rx_out.bind(rx_in[i]);
    tx_out[i].bind(ports[i]->tx_in);
    ports[i]->set_ready(this);
  }
  // PFC: which priorities each PG pauses, which queue carries each priority.
  m_pfc_stats.resize(n);
  m_wd.resize(n * 8);
  m_pg_prios = pg_prios_of(cfg);
  for (int p = 0; p < 8; ++p) {
    const uint8_t tc = cfg.qos.pcp_to_tc[p] & 7;
    m_prio_queue[p] = cfg.qos.tc_to_queue[tc] & 7;
    if (cfg.pfc.priorities >> p & 1) m_queue_prios[m_prio_queue[p]] |= static_cast<uint8_t>(1u << p);
  }
  m_sched.reserve(n);
  for (size_t i = 0; i < n; ++i) m_sched.emplace_back(cfg.sched);
  // Each queue's WRED stream (seeded by the run seed and the queue's name);
  // the queue manager consumes a word only on a decision in the ramp.
  m_wred_rng.reserve(n * 8);
  for (size_t i = 0; i < n; ++i)
    for (int q = 0; q < 8; ++q) {
      m_wred_rng.emplace_back(cfg.seed, std::string(this->name()) + ".p" + std::to_string(i) + ".q" + std::to_string(q) +
                                            ".ecn");
      m_wred_word.push_back(static_cast<uint32_t>(m_wred_rng.back().next_u64() >> 32));
    }
  for (size_t i = 0; i < n; ++i)
    m_refresh_ps.push_back(cfg.pfc.refresh_ps ? cfg.pfc.refresh_ps
                                              : pfc::quanta_ps(cfg.pfc.pause_quanta, cfg.port_rates[i]) / 2);
  m_pending.reserve(256);
  m_wakes.reserve(256);
  m_gp.set_extension(&m_cc);
  m_gp.set_streaming_width(0);
  m_gp.set_byte_enable_ptr(nullptr);
  m_gp.set_dmi_allowed(false);

  SC_METHOD(on_admit);
  sensitive << m_admit_ev;
  dont_initialize();
  SC_METHOD(on_egress_wake);
  sensitive << m_wake_ev;
  dont_initialize();
  SC_METHOD(on_refresh);
  sensitive << m_refresh_ev;
  dont_initialize();
  SC_METHOD(on_watchdog);
  sensitive << m_wd_ev;
  dont_initialize();
  if (cfg.pfc.enabled && cfg.pfc.watchdog) m_wd_ev.notify(core::ps(cfg.pfc.wd_poll_ps));
}

void Switch::set_event_log(std::vector<pfc::Event>* log) {
  m_log = log;
  for (auto& p : ports) p->set_event_log(log, basename());
}

Switch::~Switch() { m_gp.clear_extension(&m_cc); }

uint8_t Switch::traffic_class(const pk::Meta& m) const {
  const bool ip = m.kind == pk::FrameKind::roce || m.kind == pk::FrameKind::cnp || m.kind == pk::FrameKind::cm ||
                  m.kind == pk::FrameKind::ipv4_other;
  if (m_cfg.qos.trust_dscp && ip) return m_cfg.qos.dscp_to_tc[m.dscp & 63];
  return m.has_vlan ? m_cfg.qos.pcp_to_tc[m.pcp & 7] : 0;
}

uint32_t Switch::hash5(const pk::Meta& m) const {
  uint32_t h = m_cfg.hash_seed;
  h = mix32(h ^ m.src_ip);
  h = mix32(h ^ m.dst_ip);
  h = mix32(h ^ (uint32_t(m.proto) << 16 | m.sport));
  h = mix32(h ^ m.dport);
  return h;
}

void Switch::on_rx(uint32_t port, pk::Packet& pkt, const sc_time& delay) {
  pk::Packet* p = &pkt;
  const uint64_t first_bit_ps = p->rx_first_bit_ps;
  const uint64_t now = core::now_ps() + core::to_ps(delay);  // when the last bit (or the header) is in
  const uint64_t last = first_bit_ps + m_byte_time[port].ps(pk::kPreambleSfdBytes + p->frame_len());
  const uint64_t front = cycles(m_cfg.cycles.parser + m_cfg.cycles.lookup + m_cfg.cycles.mmu);
  Pending e;
  e.p = p;
  e.last_bit_ps = last;
  e.cut_through = m_cfg.cut_through && now < last;
  // Cut-through: now is when the header is in. Store-and-forward: the last bit.
  e.ready_ps = align(e.cut_through ? now : last) + front;
  schedule_ingress(e);
}

void Switch::schedule_ingress(const Pending& e0) {
  Pending e = e0;
  e.seq = m_seq++;
  const bool earliest = m_pending.empty() || e.ready_ps < m_pending.front().ready_ps;
  m_pending.push_back(e);
  std::push_heap(m_pending.begin(), m_pending.end(), std::greater<Pending>());
  if (earliest) m_admit_ev.notify(core::ps(e.ready_ps - core::now_ps()));
}

void Switch::on_admit() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_pending.empty() && m_pending.front().ready_ps <= now) {
    std::pop_heap(m_pending.begin(), m_pending.end(), std::greater<Pending>());
    const Pending e = m_pending.back();
    m_pending.pop_back();
    admit(e);
  }
  if (!m_pending.empty()) m_admit_ev.notify(core::ps(m_pending.front().ready_ps - now));
}

void Switch::drop(pk::Packet* p, pk::DropReason why) {
  ++m_drops[static_cast<size_t>(why)];
  m_ledger.drop(p, why);
}

void Switch::touch_queue(QueueStats& s) {
  const uint64_t now = core::now_ps();
  const uint64_t dt = now - s.last_change_ps;
  s.area_cells += static_cast<long double>(s.depth_cells) * dt;
  s.area_bytes += static_cast<long double>(s.depth_bytes) * dt;
  s.last_change_ps = now;
}

void Switch::touch_pg(PgStats& s) {
  const uint64_t now = core::now_ps();
  s.area_cells += static_cast<long double>(s.cells) * (now - s.last_change_ps);
  s.last_change_ps = now;
}

void Switch::admit(const Pending& e) {
  pk::Packet* p = e.p;
  const pk::Meta& m = p->meta;
  const uint32_t in = p->ingress_port;
  const uint64_t now = core::now_ps();

  const bool ipv4 = m.kind != pk::FrameKind::unknown && m.kind != pk::FrameKind::pfc;
  const uint32_t g = ipv4 ? m_routes.lookup(m.dst_ip) : kNoRoute;
  if (g == kNoRoute || g >= m_cfg.groups.size() || m_cfg.groups[g].empty()) {
    drop(p, pk::DropReason::no_route);
    return;
  }
  const std::vector<uint16_t>& members = m_cfg.groups[g];
  const uint32_t out = members.size() == 1 ? members[0] : members[hash5(m) % members.size()];
  const uint8_t tc = traffic_class(m);
  const uint8_t q = m_cfg.qos.tc_to_queue[tc] & 7;
  const uint8_t pg = m_cfg.qos.tc_to_pg[tc] & 7;
  const uint32_t qi = out * 8 + q;

  if (e.cut_through) {
    // Cut through only into an idle egress with nothing queued ahead, at the
    // same or a lower speed (a faster egress would underrun).
    const bool idle = !ports[out]->tx_busy() && !m_staged[out].valid && m_qm->head_cell(static_cast<uint16_t>(out), q) == qm::kNoCell;
    if (!idle || m_cfg.port_rates[out] > m_cfg.port_rates[in]) {
      Pending saf = e;
      saf.cut_through = false;
      saf.ready_ps = align(e.last_bit_ps) + cycles(m_cfg.cycles.parser + m_cfg.cycles.lookup + m_cfg.cycles.mmu);
      schedule_ingress(saf);
      return;
    }
  }

  if (m_wd[qi].stormed && m_cfg.pfc.wd_drop) {  // a stormed queue drops what arrives for it
    drop(p, pk::DropReason::pfc_watchdog);
    return;
  }
  const uint32_t bytes = p->frame_len();
  const uint32_t cells = m_qm->cells_for(bytes);
  qm::EnqueueOp op;
  op.in_port = static_cast<uint16_t>(in);
  op.pg = pg;
  op.out_port = static_cast<uint16_t>(out);
  op.queue = q;
  op.cells = cells;
  op.bytes = bytes;
  op.lossless = m_cfg.mmu.ports[in].pgs[pg].lossless;
  op.ecn_frame = ecn_frame(*p);
  op.ecn = m.ecn;
  op.rand32 = m_wred_word[qi];
  const qm::EnqueueResult r = m_qm->enqueue(op);
  PgStats& ps = m_pgstats[in * 8 + pg];
  ++ps.in_packets;
  ps.in_bytes += bytes;
  if (!r.admitted()) {
    drop(p, drop_reason(r.verdict));
    return;
  }
  const uint32_t head = r.head_cell;
  touch_pg(ps);
  ps.cells = r.pg.total();
  ps.peak_cells = std::max(ps.peak_cells, ps.cells);
  pfc_action(in, pg, r.pfc);
  ecn_apply(qi, *p, r.ecn);
  // Write the header bytes into the cells; the whole packet's cells cost bandwidth.
  m_gp.set_command(tlm::TLM_WRITE_COMMAND);
  m_gp.set_address(static_cast<uint64_t>(head) * m_cfg.buffer.cell_bytes);
  m_gp.set_data_ptr(p->hdr);
  m_gp.set_data_length(p->hdr_len);
  m_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  m_cc.cells = e.cut_through ? 1 : cells;  // cut-through forwards once the first cell is written
  m_cc.lead_ps = 0;
  sc_time d = SC_ZERO_TIME;
  buf_isck->b_transport(m_gp, d);
  if (!m_gp.is_response_ok()) SC_REPORT_ERROR("rocesim/switch", "packet buffer write failed");
  if (e.cut_through) {
    // The rest of the packet's cells still use write bandwidth as they arrive.
    if (cells > 1) buffer.reserve_write(now + core::to_ps(d), cells - 1);
    ++m_cut_through;
  }
  const uint32_t rcells = e.cut_through ? 1 : cells;
  const uint32_t read_cycles = (rcells + m_cfg.buffer.read_cells_per_cycle - 1) / m_cfg.buffer.read_cells_per_cycle;
  const uint64_t eligible = now + core::to_ps(d) + cycles(m_cfg.cycles.egress + read_cycles);

  QueueStats& qs = m_qstats[qi];
  touch_queue(qs);
  ++qs.enq_packets;
  qs.enq_bytes += bytes;
  ++qs.depth_packets;
  qs.depth_bytes += bytes;
  qs.depth_cells += cells;
  qs.peak_bytes = std::max(qs.peak_bytes, qs.depth_bytes);
  qs.peak_cells = std::max(qs.peak_cells, qs.depth_cells);
  m_slot[head] = Slot{p, eligible};
  schedule_wake(out, eligible);
}

void Switch::schedule_wake(uint32_t port, uint64_t t_ps) {
  if (t_ps >= m_wake_at[port]) return;  // an earlier wake will look again
  // A busy port pulls again when its frame ends; that pull schedules a wake if
  // nothing is eligible by then. So only an idle port needs one now.
  if (ports[port]->tx_busy() && !m_staged[port].valid) return;
  m_wake_at[port] = t_ps;
  const bool earliest = m_wakes.empty() || t_ps < m_wakes.front().first;
  m_wakes.emplace_back(t_ps, port);
  std::push_heap(m_wakes.begin(), m_wakes.end(), std::greater<>());
  if (earliest) m_wake_ev.notify(core::ps(t_ps - core::now_ps()));
}

void Switch::on_egress_wake() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_wakes.empty() && m_wakes.front().first <= now) {
    std::pop_heap(m_wakes.begin(), m_wakes.end(), std::greater<>());
    const auto [t, port] = m_wakes.back();
    m_wakes.pop_back();
    if (m_wake_at[port] == t) m_wake_at[port] = UINT64_MAX;
    ports[port]->kick();
  }
  if (!m_wakes.empty()) m_wake_ev.notify(core::ps(m_wakes.front().first - now));
}

void Switch::on_tx_ready(uint32_t port) {
  pk::Packet* p = pull(port);
  if (!p) return;
  sc_time zero = SC_ZERO_TIME;
  tx_out[port]->b_transport(*p, zero);
}

pk::Packet* Switch::pull(uint32_t port) {
  const uint64_t now = core::now_ps();
  Staged& st = m_staged[port];
  if (st.valid) {
    if (st.ready_ps > now) return nullptr;  // its read is still in progress; a wake is pending
    st.valid = false;
    return st.p;
  }
  // The scheduler chooses among the queues whose head is eligible (written
  // and read); PFC-paused queues are skipped (the MAC kicks us when a pause
  // ends). Nothing eligible: wake at the earliest head or shaper time.
  const uint8_t paused = paused_queues(port);
  sched::Heads heads{};
  uint64_t earliest = UINT64_MAX;
  for (int q = 0; q < 8; ++q) {
    const uint32_t h = m_qm->head_cell(static_cast<uint16_t>(port), static_cast<uint8_t>(q));
    if (h == qm::kNoCell) continue;
    const Slot& sl = m_slot[h];
    if (sl.eligible_ps <= now) {
      heads[q] = sl.p->frame_len();
    } else if (!(paused >> q & 1)) {
      earliest = std::min(earliest, sl.eligible_ps);
    }
  }
  sched::Scheduler& sc = m_sched[port];
  const int chosen = sc.pick(heads, paused, now);
  if (chosen < 0) {
    earliest = std::min(earliest, sc.next_eligible_ps(heads, paused, now));
    if (earliest != UINT64_MAX) schedule_wake(port, earliest);
    return nullptr;
  }
  sc.sent(chosen, heads[chosen], now);
  const uint32_t qi = port * 8 + static_cast<uint32_t>(chosen);
  pk::Packet* p = m_slot[m_qm->head_cell(static_cast<uint16_t>(port), static_cast<uint8_t>(chosen))].p;
  const qm::DequeueResult e = dequeue(qi, *p, false);

  // Read the header bytes back out of the cells. The egress pipeline prefetches:
  // the read was issued `read` cycles before the last clock edge at or before
  // now (the packet became eligible only after them), so an uncontended read
  // is done by that edge and the frame starts exactly at the previous frame's
  // end, back to back. Only when the memory's read bandwidth cannot keep up
  // (other ports' reads, or fewer cells per cycle than the line rate needs)
  // does the frame wait, until the clock edge that ends its read.
  const uint32_t read_cycles = (e.cells + m_cfg.buffer.read_cells_per_cycle - 1) / m_cfg.buffer.read_cells_per_cycle;
  m_gp.set_command(tlm::TLM_READ_COMMAND);
  m_gp.set_address(static_cast<uint64_t>(e.head_cell) * m_cfg.buffer.cell_bytes);
  m_gp.set_data_ptr(p->hdr);
  m_gp.set_data_length(p->hdr_len);
  m_gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  m_cc.cells = e.cells;
  m_cc.lead_ps = std::min<uint64_t>(now % m_cfg.clock_period_ps + cycles(read_cycles), now);
  sc_time d = SC_ZERO_TIME;
  buf_isck->b_transport(m_gp, d);
  if (!m_gp.is_response_ok()) SC_REPORT_ERROR("rocesim/switch", "packet buffer read failed");
  ecn_apply(qi, *p, e.ecn);  // after the read: the mark rewrites the bytes read back
  if (d == SC_ZERO_TIME) return p;
  st.p = p;
  st.ready_ps = now + core::to_ps(d);
  st.valid = true;
  schedule_wake(port, st.ready_ps);
  return nullptr;
}

bool Switch::ecn_frame(const pk::Packet& p) {
  return p.meta.kind == pk::FrameKind::roce || p.meta.kind == pk::FrameKind::ipv4_other;  // IPv4 data only
}

void Switch::ecn_apply(uint32_t qi, pk::Packet& p, const qm::EcnResult& e) {
  if (e.drew) m_wred_word[qi] = static_cast<uint32_t>(m_wred_rng[qi].next_u64() >> 32);
  if (e.mark) pk::set_ecn(p, ecn::codepoint::kCe);
}

qm::DequeueResult Switch::dequeue(uint32_t qi, pk::Packet& p, bool discard) {
  qm::DequeueOp op;
  op.port = static_cast<uint16_t>(qi / 8);
  op.queue = static_cast<uint8_t>(qi % 8);
  op.ecn_frame = ecn_frame(p);
  op.ecn = p.meta.ecn;
  op.rand32 = m_wred_word[qi];
  op.discard = discard;
  const qm::DequeueResult rel = m_qm->dequeue(op);
  PgStats& ps = m_pgstats[rel.charge.in_port * 8 + rel.charge.pg];
  touch_pg(ps);
  ps.cells = rel.pg.total();
  QueueStats& qs = m_qstats[qi];
  touch_queue(qs);
  ++qs.deq_packets;
  qs.deq_bytes += rel.bytes;
  --qs.depth_packets;
  qs.depth_bytes -= rel.bytes;
  qs.depth_cells -= rel.cells;
  pfc_action(rel.charge.in_port, rel.charge.pg, rel.pfc);
  return rel;
}

uint8_t Switch::queues_of(uint8_t prios) const {
  uint8_t q = 0;
  for (int p = 0; p < 8; ++p)
    if (prios >> p & 1) q |= static_cast<uint8_t>(1u << m_prio_queue[p]);
  return q;
}

uint8_t Switch::paused_queues(uint32_t port) {
  const uint8_t prios = ports[port]->paused_mask();
  if (!prios) return 0;
  uint8_t q = queues_of(prios);
  // A queue the watchdog declared stormed ignores the pause (forward), or
  // has nothing to send (drop).
  if (m_cfg.pfc.watchdog)
    for (int k = 0; k < 8; ++k)
      if (m_wd[port * 8 + k].stormed) q &= static_cast<uint8_t>(~(1u << k));
  return q;
}

void Switch::pfc_action(uint32_t port, uint8_t pg, qm::PfcAction a) {
  if (a == qm::PfcAction::xoff) send_pause(port, pg, true);
  if (a == qm::PfcAction::xon) send_pause(port, pg, false);
}

void Switch::send_pause(uint32_t port, uint8_t pg, bool xoff, bool refresh) {
  const uint8_t prios = m_pg_prios[pg];
  if (!refresh) {  // a transition: count and log it per priority
    for (int p = 0; p < 8; ++p) {
      if (!(prios >> p & 1)) continue;
      ++(xoff ? m_pfc_stats[port].xoff : m_pfc_stats[port].xon)[p];
      if (m_log) m_log->push_back(pfc::Event{core::now_ps(), basename(), port, static_cast<uint8_t>(p), xoff ? "xoff" : "xon"});
    }
  }
  uint16_t timers[8] = {};
  for (int p = 0; p < 8; ++p)
    if (prios >> p & 1) timers[p] = xoff ? m_cfg.pfc.pause_quanta : 0;
  pk::Packet* f = m_ledger.create();
  pk::build_pfc(*f, port < m_cfg.port_macs.size() ? m_cfg.port_macs[port] : 0x028000000000ull | port, prios, timers);
  f->created_ps = core::now_ps();
  ports[port]->send_control(f);
  if (!xoff) return;
  // Keep the peer paused: re-send before its timer runs out.
  const uint64_t t = core::now_ps() + m_refresh_ps[port];
  const bool earliest = m_refresh.empty() || t < m_refresh.front().first;
  m_refresh.emplace_back(t, port * 8 + pg);
  std::push_heap(m_refresh.begin(), m_refresh.end(), std::greater<>());
  if (earliest) m_refresh_ev.notify(core::ps(t - core::now_ps()));
}

void Switch::on_refresh() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_refresh.empty() && m_refresh.front().first <= now) {
    std::pop_heap(m_refresh.begin(), m_refresh.end(), std::greater<>());
    const uint32_t key = m_refresh.back().second;
    m_refresh.pop_back();
    // Only the newest schedule of a PG that is still XOFF re-sends (an XON in
    // between ends the refreshes; a new XOFF scheduled its own).
    const uint16_t port = static_cast<uint16_t>(key / 8);
    const uint8_t pg = static_cast<uint8_t>(key % 8);
    if (!m_qm->xoff(port, pg)) continue;
    bool newer = false;
    for (const auto& r : m_refresh) newer |= r.second == key;
    if (newer) continue;
    // The refresh tick re-evaluates XON on the PG's state now (pfc.h: a
    // dynamic threshold may have risen because other PGs drained, and an
    // XOFF PG with nothing left has no operation of its own to resume on).
    if (m_qm->pfc_tick(port, pg) == qm::PfcAction::xon) {
      send_pause(port, pg, false);
      continue;
    }
    ++m_pfc_stats[key / 8].refreshes;
    send_pause(key / 8, static_cast<uint8_t>(key % 8), true, true);
  }
  if (!m_refresh.empty()) m_refresh_ev.notify(core::ps(m_refresh.front().first - now));
}

void Switch::flush_queue(uint32_t qi) {
  const uint16_t port = static_cast<uint16_t>(qi / 8);
  const uint8_t q = static_cast<uint8_t>(qi % 8);
  for (uint32_t h; (h = m_qm->head_cell(port, q)) != qm::kNoCell;) {
    pk::Packet* p = m_slot[h].p;
    dequeue(qi, *p, true);
    drop(p, pk::DropReason::pfc_watchdog);
  }
}

void Switch::on_watchdog() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  const PfcConfig& c = m_cfg.pfc;
  for (uint32_t port = 0; port < ports.size(); ++port) {
    const uint8_t paused = queues_of(ports[port]->paused_mask());
    for (uint32_t q = 0; q < 8; ++q) {
      const uint32_t qi = port * 8 + q;
      Wd& w = m_wd[qi];
      const QueueStats& qs = m_qstats[qi];
      const bool is_paused = paused >> q & 1;
      const uint8_t q_prios = m_queue_prios[q];
      auto log = [&](const char* what) {
        if (!m_log) return;
        for (int p = 0; p < 8; ++p)
          if (q_prios >> p & 1) m_log->push_back(pfc::Event{now, basename(), port, static_cast<uint8_t>(p), what});
      };
      if (!w.stormed) {
        if (!is_paused || qs.depth_packets == 0 || qs.deq_packets != w.deq_at_check) {
          w.stuck_since = is_paused && qs.depth_packets ? now : UINT64_MAX;
          w.deq_at_check = qs.deq_packets;
          continue;
        }
        if (w.stuck_since == UINT64_MAX) w.stuck_since = now;
        if (now - w.stuck_since < c.wd_detection_ps) continue;
        // Paused, holding packets, and nothing sent for the detection time: a storm.
        w.stormed = true;
        w.free_since = UINT64_MAX;
        ++m_wd_events;
        ++m_pfc_stats[port].storms;
        log("storm_detected");
        if (c.wd_drop) flush_queue(qi);
        ports[port]->kick();
        continue;
      }
      if (c.wd_drop) flush_queue(qi);
      if (is_paused) {
        w.free_since = UINT64_MAX;
        continue;
      }
      if (w.free_since == UINT64_MAX) w.free_since = now;
      if (now - w.free_since < c.wd_restoration_ps) continue;
      w.stormed = false;
      w.stuck_since = UINT64_MAX;
      w.deq_at_check = qs.deq_packets;
      log("storm_restored");
    }
  }
  m_wd_ev.notify(core::ps(c.wd_poll_ps));
}

QueueStats Switch::queue_stats_now(uint32_t port, uint32_t q) const {
  QueueStats s = m_qstats[port * 8 + q];
  const uint64_t dt = core::now_ps() - s.last_change_ps;
  s.area_cells += static_cast<long double>(s.depth_cells) * dt;
  s.area_bytes += static_cast<long double>(s.depth_bytes) * dt;
  s.last_change_ps = core::now_ps();
  return s;
}

PgStats Switch::pg_stats_now(uint32_t port, uint32_t pg) const {
  PgStats s = m_pgstats[port * 8 + pg];
  s.area_cells += static_cast<long double>(s.cells) * (core::now_ps() - s.last_change_ps);
  s.last_change_ps = core::now_ps();
  return s;
}

size_t Switch::frames_held() const {
  size_t n = m_pending.size();
  for (uint32_t port = 0; port < ports.size(); ++port)
    for (uint8_t q = 0; q < 8; ++q) n += m_qm->queue_packets(static_cast<uint16_t>(port), q);
  for (const auto& s : m_staged) n += s.valid;
  for (const auto& p : ports) n += p->frames_held();
  return n;
}

}  // namespace rocesim::sw
