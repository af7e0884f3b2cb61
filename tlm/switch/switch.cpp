// The chip's construction, statistics and counts. The stages are one file
// each: ingress.cpp (parser, lookup, admission through the queue manager,
// buffer write), egress.cpp (scheduling, dequeue, buffer read) and
// pfc_control.cpp (pause frames, refresh, watchdog).
#include "switch/switch.h"

#include <algorithm>
#include <stdexcept>

namespace rocesim::sw {

using namespace sc_core;
namespace pk = rocesim::packet;

namespace {

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

}  // namespace

void Switch::end_of_elaboration() {
  // Bound by now (SystemC checks the binding before this callback).
  for (size_t i = 0; i < tx_out.size(); ++i) m_port[i].tx_if = tx_out[i].operator->();
  m_buf_if = buf_isck.operator->();
}

Switch::Switch(sc_module_name name, const SwitchConfig& cfg, const RouteLookup& routes, link::Ledger& ledger)
    : sc_module(name),
      buf_isck("buf_isck"),
      buffer("buffer", with_clock(cfg.buffer, cfg.clock_period_ps)),
      rx_in("rx_in", cfg.port_rates.size()),
      tx_out("tx_out", cfg.port_rates.size()),
      m_cfg(cfg),
      m_routes(routes),
      m_ledger(ledger),
      m_ecmp(cfg.ecmp, cfg.groups),
      m_qm_model(qm_config(cfg)) {
  const size_t n = cfg.port_rates.size();
  if (cfg.mmu.ports.size() != n) throw std::invalid_argument("MMU configuration has a different number of ports");
  buf_isck.bind(buffer.tsck);
  m_links.qm = m_qm;
  buffer.set_links(&m_links);
  for (size_t i = 0; i < n; ++i) m_port_if.push_back(std::make_unique<PortIf>());
  m_qlist.resize(n * 8);
  m_port.resize(n);
  m_qstats.resize(n * 8);
  m_pgstats.resize(n * 8);
  for (size_t i = 0; i < n; ++i) m_port[i].byte_time = core::ByteTime(cfg.port_rates[i]);
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
    m_port[i].mac = ports[i].get();
  }
  // PFC: which priorities each PG pauses, which queue carries each priority.
  m_pfc_stats.resize(n);
  if (cfg.pfc.watchdog) m_wd.resize(n * 8);  // read only where the watchdog is on
  for (size_t i = 0; i < n; ++i) m_port[i].lossless_pgs = mmu::lossless_pg_mask(cfg.mmu.ports[i]);
  m_pg_prios = pg_prios_of(cfg);
  for (int p = 0; p < 8; ++p) {
    const uint8_t tc = cfg.qos.pcp_to_tc[p] & 7;
    m_prio_queue[p] = cfg.qos.tc_to_queue[tc] & 7;
    if (cfg.pfc.priorities >> p & 1) m_queue_prios[m_prio_queue[p]] |= static_cast<uint8_t>(1u << p);
  }
  m_sched.reserve(n);
  for (size_t i = 0; i < n; ++i) m_sched.emplace_back(cfg.sched);
  // Each queue's WRED stream (seeded by the run seed and the queue's name);
  // the queue manager consumes a word only on a decision in the ramp, so
  // with no queue marking the streams are not kept: each queue's word (which
  // every operation carries, and an ops file records) is their first.
  bool marking = false;
  for (const ecn::MarkerConfig& e : cfg.ecn) marking |= e.mode != ecn::MarkerConfig::Mode::off;
  if (marking) m_wred_rng.reserve(n * 8);
  m_wred_word.reserve(n * 8);
  for (size_t i = 0; i < n; ++i)
    for (int q = 0; q < 8; ++q) {
      core::Rng r(cfg.seed, std::string(this->name()) + ".p" + std::to_string(i) + ".q" + std::to_string(q) + ".ecn");
      m_wred_word.push_back(static_cast<uint32_t>(r.next_u64() >> 32));
      if (marking) m_wred_rng.push_back(r);
    }
  for (size_t i = 0; i < n; ++i)
    m_refresh_ps.push_back(cfg.pfc.refresh_ps ? cfg.pfc.refresh_ps
                                              : pfc::quanta_ps(cfg.pfc.pause_quanta, cfg.port_rates[i]) / 2);
  // Dynamic load balancing or spraying (ecmp.dlb): one decision block per
  // group of more than one member; each port knows the (group, member) pairs
  // it serves, for the load inputs. The spray stream is seeded by the run seed
  // and the switch's and group's names, as the WRED streams are.
  m_dlb_of.assign(cfg.groups.size(), kNoDlb);
  m_port_dlb.resize(n);
  if (cfg.ecmp.dlb.mode != ecmp::DlbMode::off) {
    for (size_t g = 0; g < cfg.groups.size(); ++g) {
      if (cfg.groups[g].size() < 2) continue;
      std::vector<uint64_t> rates;
      for (uint16_t port : cfg.groups[g]) rates.push_back(cfg.port_rates.at(port));
      core::Rng seed(cfg.seed, std::string(this->name()) + ".g" + std::to_string(g) + ".lb");
      m_dlb_of[g] = static_cast<uint32_t>(m_dlb.size());
      for (size_t m = 0; m < cfg.groups[g].size(); ++m) {
        m_port_dlb[cfg.groups[g][m]].push_back(DlbMember{m_dlb_of[g], static_cast<uint32_t>(m)});
        m_port[cfg.groups[g][m]].dlb = true;
      }
      m_dlb.emplace_back(cfg.ecmp.dlb, rates, seed.next_u64());
    }
  }
  m_port_bytes.assign(n, 0);
  m_port_members.resize(n);
  for (size_t g = 0; g < cfg.groups.size(); ++g)
    for (size_t m = 0; m < cfg.groups[g].size(); ++m)
      m_port_members.at(cfg.groups[g][m]).emplace_back(static_cast<uint32_t>(g), static_cast<uint32_t>(m));
  m_member_base.reserve(cfg.groups.size());
  size_t members = 0;
  for (const auto& grp : cfg.groups) {
    m_member_base.push_back(static_cast<uint32_t>(members));
    members += grp.size();
  }
  m_members.assign(members, MemberCount{});
  m_pending.reserve(4 * n);  // grows to the peak of frames in the pipeline, then stays
  m_edge.reserve(std::max<size_t>(n, 16));
  m_wakes.reserve(2 * n);
  m_gp.set_extension(&m_cc);
  m_gp.set_streaming_width(0);
  m_gp.set_byte_enable_ptr(nullptr);
  m_gp.set_dmi_allowed(false);

  m_admit_ev.bind<&Switch::on_admit>(this);
  m_wake_ev.bind<&Switch::on_egress_wake>(this);
  m_refresh_ev.bind<&Switch::on_refresh>(this);
  m_wd_ev.bind<&Switch::on_watchdog>(this);
  m_port_ev.bind<&Switch::on_port_change>(this);
  if (cfg.pfc.enabled && cfg.pfc.watchdog) m_wd_ev.after(cfg.pfc.wd_poll_ps);
}

void Switch::set_port_up_at(uint32_t port, uint64_t t_ps, bool up) {
  if (port >= ports.size()) throw std::invalid_argument(std::string(name()) + ": no port " + std::to_string(port));
  if (t_ps < core::now_ps()) throw std::invalid_argument(std::string(name()) + ": a port state change in the past");
  m_port_changes.push_back(PortChange{t_ps, port, up});
  std::push_heap(m_port_changes.begin(), m_port_changes.end(), std::greater<PortChange>());
  m_port_ev.at(m_port_changes.front().t_ps);
}

void Switch::on_port_change() {
  m_ledger.count_event();
  const uint64_t now = core::now_ps();
  while (!m_port_changes.empty() && m_port_changes.front().t_ps <= now) {
    std::pop_heap(m_port_changes.begin(), m_port_changes.end(), std::greater<PortChange>());
    const PortChange c = m_port_changes.back();
    m_port_changes.pop_back();
    for (const auto& [g, m] : m_port_members[c.port]) {
      if (m_ecmp.member_up(g, m) == c.up) continue;
      m_ecmp.set_member_up(g, m, c.up);
      ++m_member_changes;
    }
    for (const DlbMember& d : m_port_dlb[c.port]) m_dlb[d.block].set_up(d.member, c.up);
    if (!c.up) {
      // The port is down: what waits for it is dropped (link_down), and its
      // MAC sends nothing more (not even PFC frames) until it comes back.
      PortState& st = m_port[c.port];
      if (st.staged) {
        pk::Packet* p = st.staged;
        st.staged = nullptr;
        drop(p, pk::DropReason::link_down);
      }
      for (uint32_t q = 0; q < 8; ++q) flush_queue(c.port * 8 + q, pk::DropReason::link_down);
    }
    ports[c.port]->set_tx_enabled(c.up);
  }
  if (!m_port_changes.empty()) m_port_ev.at(m_port_changes.front().t_ps);
}

void Switch::set_event_log(std::vector<pfc::Event>* log) {
  m_log = log;
  for (auto& p : ports) p->set_event_log(log, basename());
}

Switch::~Switch() { m_gp.clear_extension(&m_cc); }

qm::Config Switch::queue_manager_config(const SwitchConfig& cfg) { return qm_config(cfg); }

void Switch::enable_lockstep(std::unique_ptr<qm::QueueManagerIf> dut) {
  m_dut = std::move(dut);
  m_lockstep = std::make_unique<qm::LockstepQueueManager>(m_qm_model, *m_dut, [] { return core::now_ps(); });
  m_qm = m_lockstep.get();
  m_links.qm = m_qm;
}

void Switch::enable_rtl(std::unique_ptr<qm::QueueManagerIf> rtl) {
  m_dut = std::move(rtl);
  m_counting = std::make_unique<qm::CountingQueueManager>(*m_dut, m_qm_model.config());
  m_qm = m_counting.get();
  m_links.qm = m_qm;
}

void Switch::record_ops(std::FILE* out, uint32_t index) {
  m_recorder = std::make_unique<qm::RecordingQueueManager>(*m_qm, out, index, [] { return core::now_ps(); });
  m_qm = m_recorder.get();
  m_links.qm = m_qm;
}

void Switch::drop(pk::Packet* p, pk::DropReason why, uint32_t qi) {
  ++m_drops[static_cast<size_t>(why)];
  if (m_trace) {
    const uint64_t now = core::now_ps();
    m_trace->rec->add(m_trace->drops, now);
    if (qi != UINT32_MAX && m_trace->q_drops[qi] != link::kNoTrace) m_trace->rec->add(m_trace->q_drops[qi], now);
  }
  m_ledger.drop(p, why);
}

void Switch::trace_op(uint32_t qi, bool marked, const mmu::Charge& c) {
  const uint32_t pgi = c.in_port * 8u + c.pg;
  // Every value is the state after the operation, at now (the switch's
  // stages run at their own times: no early hand-off here).
  trace::Recorder& r = *m_trace->rec;
  const uint64_t now = core::now_ps();
  if (m_trace->q_bytes[qi] != link::kNoTrace) {
    const QueueStats& qs = m_qstats[qi];
    r.set(m_trace->q_bytes[qi], now, qs.depth_bytes);
    r.set(m_trace->q_cells[qi], now, qs.depth_cells);
    if (marked) r.add(m_trace->q_ecn[qi], now);
  }
  if (m_trace->pg_cells[pgi] != link::kNoTrace) r.set(m_trace->pg_cells[pgi], now, m_pgstats[pgi].cells);
  const mmu::Mmu& m = mmu();  // the booked counters in rtl mode
  r.set(m_trace->pool[c.in_pool], now, m.pool(c.in_pool).used);
  r.set(m_trace->pool[c.eg_pool], now, m.pool(c.eg_pool).used);
  r.set(m_trace->headroom_pool, now, m.headroom_pool_used());
  r.set(m_trace->buffer_cells, now, m.total_used());
}

void Switch::touch_queue(QueueStats& s) {
  const uint64_t now = core::now_ps();
  const uint64_t dt = now - s.last_change_ps;
  s.area_cells += static_cast<unsigned __int128>(s.depth_cells) * dt;
  s.area_bytes += static_cast<unsigned __int128>(s.depth_bytes) * dt;
  s.last_change_ps = now;
}

void Switch::touch_pg(PgStats& s) {
  const uint64_t now = core::now_ps();
  s.area_cells += static_cast<unsigned __int128>(s.cells) * (now - s.last_change_ps);
  s.last_change_ps = now;
}

QueueStats Switch::queue_stats_now(uint32_t port, uint32_t q) const {
  QueueStats s = m_qstats[port * 8 + q];
  const uint64_t dt = core::now_ps() - s.last_change_ps;
  s.area_cells += static_cast<unsigned __int128>(s.depth_cells) * dt;
  s.area_bytes += static_cast<unsigned __int128>(s.depth_bytes) * dt;
  s.last_change_ps = core::now_ps();
  return s;
}

PgStats Switch::pg_stats_now(uint32_t port, uint32_t pg) const {
  PgStats s = m_pgstats[port * 8 + pg];
  s.area_cells += static_cast<unsigned __int128>(s.cells) * (core::now_ps() - s.last_change_ps);
  s.last_change_ps = core::now_ps();
  return s;
}

size_t Switch::frames_held() const {
  size_t n = m_pending.size();
  for (uint32_t port = 0; port < ports.size(); ++port)
    for (uint8_t q = 0; q < 8; ++q) n += m_qm->queue_packets(static_cast<uint16_t>(port), q);
  for (const PortState& s : m_port) n += s.staged != nullptr;
  for (const auto& p : ports) n += p->frames_held();
  return n;
}

}  // namespace rocesim::sw
