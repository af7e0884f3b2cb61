#include "sim/switch_config.h"

#include <algorithm>
#include <sstream>

#include "core/units.h"
#include "mmu/config.h"
#include "pfc/pfc.h"
#include "sched/config.h"
#include "sim/config_util.h"

namespace rocesim::sim {

using core::CfgNode;

sw::QosConfig SwitchSpec::default_qos() {
  sw::QosConfig q;
  q.trust_dscp = true;
  q.dscp_to_tc.fill(0);
  q.dscp_to_tc[26] = 3;  // RoCE data (seed 000: priority 3)
  q.dscp_to_tc[24] = 3;
  q.dscp_to_tc[48] = 6;  // CNP (DSCP 48, priority 6)
  return q;
}

ecn::MarkerConfig SwitchSpec::default_ecn() {
  // WRED with the HPCC evaluation's per-25G values (REFERENCE.md), in bytes
  // (ecn.unit: cells converts them, ecn/config.h).
  ecn::MarkerConfig c;
  c.mode = ecn::MarkerConfig::Mode::wred;
  c.point = ecn::MarkerConfig::Point::enqueue;
  c.kmin = 100000;
  c.kmax = 400000;
  c.pmax = 0.2;
  c.k = 100000;
  c.k_high = 200000;
  c.k_low = 100000;
  return c;
}

namespace {

// One marker config: keys absent keep the values of `c` (the default or the
// top-level section a per-queue entry inherits). A `unit` different from the
// inherited one converts the inherited thresholds first (ecn::MarkerConfig::
// in_unit: bytes -> cells rounded up at the switch's cell size), so
// `unit: cells` alone gives the byte defaults in cells, not 100000 cells.
void read_marker(const CfgNode& n, ecn::MarkerConfig& c, bool top, uint32_t cell_bytes) {
  using M = ecn::MarkerConfig;
  const std::string mode = n.choice("mode", ecn::mode_name(c.mode), {"off", "threshold", "wred", "hysteresis"});
  c.mode = mode == "off" ? M::Mode::off : mode == "threshold" ? M::Mode::threshold : mode == "wred" ? M::Mode::wred
                                                                                                    : M::Mode::hysteresis;
  c.point = n.choice("point", ecn::point_name(c.point), {"enqueue", "dequeue"}) == "enqueue" ? M::Point::enqueue
                                                                                                : M::Point::dequeue;
  const bool cells = n.choice("unit", ecn::unit_name(c.unit), {"bytes", "cells"}) == "cells";
  c = c.in_unit(cells ? M::Unit::cells : M::Unit::bytes, cell_bytes);
  // Thresholds: sizes in bytes, or plain integers when the unit is cells.
  auto amount = [&](const char* key, uint64_t v) -> uint64_t {
    return cells ? static_cast<uint64_t>(n.integer(key, static_cast<int64_t>(v), 0, INT64_MAX)) : n.size(key, v);
  };
  c.k = amount("k", c.k);
  c.kmin = amount("kmin", c.kmin);
  c.kmax = amount("kmax", c.kmax);
  c.pmax = n.real("pmax", c.pmax, 0.0, 1.0);
  c.k_high = amount("k_high", c.k_high);
  c.k_low = amount("k_low", c.k_low);
  if (!top) n.finish();
  const std::vector<std::string> errs = c.validate();
  if (!errs.empty()) n.fail(errs.front());
}

}  // namespace

namespace {

const std::vector<std::string> kPoolNames{"ingress_lossless", "ingress_lossy", "egress_lossless", "egress_lossy"};

uint32_t pool_index(const std::string& name) {
  return static_cast<uint32_t>(std::find(kPoolNames.begin(), kPoolNames.end(), name) - kPoolNames.begin());
}

void read_profile(const CfgNode& n, ProfileSpec& p, bool allow_headroom) {
  p.pool = n.choice("pool", p.pool, kPoolNames);
  p.reserved_bytes = n.size("reserved", p.reserved_bytes);
  const bool has_dyn = n.has("dynamic_th"), has_static = n.has("static_th");
  if (has_dyn && has_static) n.fail_key("static_th", "give either dynamic_th or static_th, not both");
  if (has_dyn) {
    p.dynamic = true;
    p.dynamic_th = static_cast<int>(n.integer("dynamic_th", p.dynamic_th, mmu::kMinDynamicTh, mmu::kMaxDynamicTh));
  } else if (has_static) {
    p.dynamic = false;
    p.static_bytes = n.size("static_th", p.static_bytes, 1);
  } else {
    // Neither given: keep the default, but let finish() know both names.
    (void)n.integer("dynamic_th", p.dynamic_th, mmu::kMinDynamicTh, mmu::kMaxDynamicTh);
  }
  if (allow_headroom) p.headroom_bytes = n.size("headroom", p.headroom_bytes);
  n.finish();
}

template <size_t N>
void read_u8_list(const CfgNode& parent, const std::string& key, std::array<uint8_t, N>& out, int max) {
  if (!parent.has(key)) {
    (void)parent.seq(key);
    return;
  }
  const std::vector<CfgNode> items = parent.seq(key);
  if (items.size() != N) parent.fail_key(key, "expected a list of " + std::to_string(N) + " entries");
  for (size_t i = 0; i < N; ++i) out[i] = static_cast<uint8_t>(items[i].as_integer(0, max));
}

uint32_t cells(uint64_t bytes, uint32_t cell) { return static_cast<uint32_t>((bytes + cell - 1) / cell); }

mmu::Threshold threshold_of(const ProfileSpec& p, uint32_t cell) {
  mmu::Threshold t;
  t.mode = p.dynamic ? mmu::ThresholdMode::dynamic_th : mmu::ThresholdMode::static_th;
  t.dynamic_th = p.dynamic_th;
  t.static_cells = cells(p.static_bytes, cell);
  return t;
}

}  // namespace

SwitchSpec read_switch(const CfgNode& n) {
  SwitchSpec s;
  s.clock_period_ps = n.time("clock_period", s.clock_period_ps, 100, 100000);
  const CfgNode pipe = n.map("pipeline");
  s.cycles.parser = static_cast<uint32_t>(pipe.integer("parser", s.cycles.parser, 0, 100000));
  s.cycles.lookup = static_cast<uint32_t>(pipe.integer("lookup", s.cycles.lookup, 0, 100000));
  s.cycles.mmu = static_cast<uint32_t>(pipe.integer("mmu", s.cycles.mmu, 0, 100000));
  s.cycles.egress = static_cast<uint32_t>(pipe.integer("egress", s.cycles.egress, 0, 100000));
  pipe.finish();
  s.cut_through = n.boolean("cut_through", s.cut_through);

  const CfgNode buf = n.map("buffer");
  s.cell_bytes = static_cast<uint32_t>(buf.size("cell", s.cell_bytes, 64, 16384));
  s.buffer_bytes = buf.size("size", s.buffer_bytes, s.cell_bytes, 4ull << 30);
  s.write_cells_per_cycle = static_cast<uint32_t>(buf.integer("write_cells_per_cycle", s.write_cells_per_cycle, 1, 4096));
  s.read_cells_per_cycle = static_cast<uint32_t>(buf.integer("read_cells_per_cycle", s.read_cells_per_cycle, 1, 4096));
  buf.finish();

  const CfgNode m = n.map("mmu");
  const CfgNode pools = m.map("pools");
  s.ingress_lossless_pool = pools.size("ingress_lossless", s.ingress_lossless_pool);
  s.ingress_lossy_pool = pools.size("ingress_lossy", s.ingress_lossy_pool);
  s.egress_lossless_pool = pools.size("egress_lossless", s.egress_lossless_pool);
  s.egress_lossy_pool = pools.size("egress_lossy", s.egress_lossy_pool);
  pools.finish();
  s.shared_headroom_bytes = m.size("shared_headroom", s.shared_headroom_bytes);
  if (m.has("lossless_pgs")) {
    s.lossless_pgs.clear();
    for (const CfgNode& e : m.seq("lossless_pgs")) s.lossless_pgs.push_back(static_cast<uint32_t>(e.as_integer(0, 7)));
  } else {
    (void)m.seq("lossless_pgs");
  }
  read_profile(m.map("pg_lossless"), s.pg_lossless, true);
  read_profile(m.map("pg_lossy"), s.pg_lossy, false);
  read_profile(m.map("queue_lossless"), s.queue_lossless, false);
  read_profile(m.map("queue_lossy"), s.queue_lossy, false);
  m.finish();

  const CfgNode q = n.map("qos");
  s.qos.trust_dscp = q.choice("trust", "dscp", {"dscp", "pcp"}) == "dscp";
  if (q.has("dscp_to_tc")) {
    const CfgNode map = q.map("dscp_to_tc");
    s.qos.dscp_to_tc.fill(0);
    for (const std::string& k : map.keys()) {
      int64_t dscp = -1;
      try {
        size_t used = 0;
        dscp = std::stoll(k, &used);
        if (used != k.size()) dscp = -1;
      } catch (...) {
        dscp = -1;
      }
      if (dscp < 0 || dscp > 63) map.fail_key(k, "DSCP keys must be integers 0..63");
      s.qos.dscp_to_tc[static_cast<size_t>(dscp)] = static_cast<uint8_t>(map.integer(k, 0, 0, 7));
    }
    map.finish();
  } else {
    (void)q.map("dscp_to_tc");
  }
  read_u8_list(q, "pcp_to_tc", s.qos.pcp_to_tc, 7);
  read_u8_list(q, "tc_to_queue", s.qos.tc_to_queue, 7);
  read_u8_list(q, "tc_to_pg", s.qos.tc_to_pg, 7);
  q.finish();
  s.hash_seed = static_cast<uint32_t>(n.integer("hash_seed", 0, 0, UINT32_MAX));
  const CfgNode sc = n.map("scheduler");
  if (sc.str("quantum", "auto") != "auto") s.sched_quantum_bytes = sc.size("quantum", 0, 64, 1 << 20);
  const CfgNode sq = sc.map("queues");
  for (const std::string& k : sq.keys()) {
    if (k.size() != 1 || k[0] < '0' || k[0] > '7') sq.fail_key(k, "queue keys are 0..7");
    SwitchSpec::QueueSched& qs = s.sched_queues[k[0] - '0'];
    const CfgNode qn = sq.map(k);
    qs.strict = qn.choice("mode", qs.strict ? "strict" : "dwrr", {"strict", "dwrr"}) == "strict";
    qs.weight = static_cast<uint32_t>(qn.integer("weight", qs.weight, 1, 1000));
    const CfgNode sh = qn.map("shaper");
    qs.shaper_rate_bps = sh.rate("rate", qs.shaper_rate_bps, 0, 10000000000000ull);
    qs.shaper_burst_bytes = sh.size("burst", qs.shaper_burst_bytes ? qs.shaper_burst_bytes : 16384, 0, 1 << 20);
    sh.finish();
    qn.finish();
  }
  sq.finish();
  const CfgNode psh = sc.map("shaper");
  s.port_shaper_rate_bps = psh.rate("rate", s.port_shaper_rate_bps, 0, 10000000000000ull);
  s.port_shaper_burst_bytes = psh.size("burst", 16384, 0, 1 << 20);
  psh.finish();
  sc.finish();
  const CfgNode e = n.map("ecn");
  read_marker(e, s.ecn, true, s.cell_bytes);
  s.ecn_lossless_only = e.boolean("lossless_only", s.ecn_lossless_only);
  const CfgNode qs = e.map("queues");
  for (const std::string& k : qs.keys()) {
    if (k.size() != 1 || k[0] < '0' || k[0] > '7') qs.fail_key(k, "queue keys are 0..7");
    const int q = k[0] - '0';
    s.ecn_override[q] = true;
    s.ecn_queue[q] = s.ecn;
    read_marker(qs.map(k), s.ecn_queue[q], false, s.cell_bytes);
  }
  qs.finish();
  e.finish();
  n.finish();
  return s;
}

sw::SwitchConfig make_switch_config(const SwitchSpec& s, const PfcSpec& pfc, const std::vector<PortPhys>& ports,
                                    uint32_t max_frame_bytes) {
  std::vector<uint64_t> port_rates;
  for (const PortPhys& p : ports) port_rates.push_back(p.rate_bps);
  sw::SwitchConfig c;
  c.clock_period_ps = s.clock_period_ps;
  c.cycles = s.cycles;
  c.cut_through = s.cut_through;
  c.port_rates = port_rates;
  c.buffer.cell_bytes = s.cell_bytes;
  c.buffer.total_cells = static_cast<uint32_t>(s.buffer_bytes / s.cell_bytes);
  c.buffer.write_cells_per_cycle = s.write_cells_per_cycle;
  c.buffer.read_cells_per_cycle = s.read_cells_per_cycle;
  c.buffer.clock_period_ps = s.clock_period_ps;
  c.qos = s.qos;
  c.hash_seed = s.hash_seed;

  const uint32_t cell = s.cell_bytes;
  mmu::Config& m = c.mmu;
  m.cell_bytes = cell;
  m.total_cells = c.buffer.total_cells;
  // Pool indices: 0 ingress lossless, 1 ingress lossy, 2 egress lossless, 3 egress lossy.
  m.pools = {
      {"ingress_lossless", mmu::PoolType::ingress, cells(s.ingress_lossless_pool, cell), mmu::ThresholdMode::dynamic_th},
      {"ingress_lossy", mmu::PoolType::ingress, cells(s.ingress_lossy_pool, cell), mmu::ThresholdMode::dynamic_th},
      {"egress_lossless", mmu::PoolType::egress, cells(s.egress_lossless_pool, cell), mmu::ThresholdMode::dynamic_th},
      {"egress_lossy", mmu::PoolType::egress, cells(s.egress_lossy_pool, cell), mmu::ThresholdMode::dynamic_th},
  };
  m.shared_headroom_cells = cells(s.shared_headroom_bytes, cell);
  std::array<bool, 8> pg_lossless{};
  // Without PFC nothing holds a lossless PG's senders back: its PGs are lossy.
  if (pfc.enabled)
    for (uint32_t pg : s.lossless_pgs) pg_lossless[pg] = true;
  // A queue is lossless when a traffic class mapped to it is mapped to a lossless PG.
  std::array<bool, 8> q_lossless{};
  for (int tc = 0; tc < 8; ++tc)
    if (pg_lossless[s.qos.tc_to_pg[tc]]) q_lossless[s.qos.tc_to_queue[tc]] = true;
  m.ports.resize(port_rates.size());
  for (size_t i = 0; i < m.ports.size(); ++i) {
    mmu::PortConfig& p = m.ports[i];
    uint64_t headroom = s.pg_lossless.headroom_bytes;
    if (pfc.headroom == PfcSpec::Headroom::fixed) headroom = pfc.headroom_bytes;
    if (pfc.headroom == PfcSpec::Headroom::automatic) {
      pfc::HeadroomInputs in;
      in.rate_bps = ports[i].rate_bps;
      in.cable_delay_ps = ports[i].cable_ps;
      in.mtu_bytes = in.lossless_mtu_bytes = max_frame_bytes;
      in.mac_phy_delay_bytes = pfc.mac_phy_delay_bytes;
      in.cell_occupancy = pfc.cell_occupancy;
      headroom = pfc::headroom_bytes(in);
    }
    for (int pg = 0; pg < 8; ++pg) {
      const ProfileSpec& prof = pg_lossless[pg] ? s.pg_lossless : s.pg_lossy;
      mmu::PgProfile& g = p.pgs[pg];
      g.pool = pool_index(prof.pool);
      g.reserved_cells = cells(prof.reserved_bytes, cell);
      g.threshold = threshold_of(prof, cell);
      g.headroom_cells = pg_lossless[pg] ? cells(headroom, cell) : 0;
      g.lossless = pg_lossless[pg];
    }
    for (int q = 0; q < 8; ++q) {
      const ProfileSpec& prof = q_lossless[q] ? s.queue_lossless : s.queue_lossy;
      mmu::QueueProfile& qp = p.queues[q];
      qp.pool = pool_index(prof.pool);
      qp.reserved_cells = cells(prof.reserved_bytes, cell);
      qp.threshold = threshold_of(prof, cell);
    }
  }
  // Scheduler: every port the same.
  sched::PortConfig& sp = c.sched;
  sp.max_frame_bytes = max_frame_bytes;
  const uint32_t base = static_cast<uint32_t>(s.sched_quantum_bytes ? s.sched_quantum_bytes : max_frame_bytes);
  for (int q = 0; q < 8; ++q) {
    const SwitchSpec::QueueSched& qs = s.sched_queues[q];
    sp.queues[q].mode = qs.strict ? sched::Mode::strict : sched::Mode::dwrr;
    sp.queues[q].quantum_bytes = qs.strict ? 0 : sched::quantum_for_weight(qs.weight, base);
    // A burst without a rate means no shaper.
    sp.queues[q].shaper = {qs.shaper_rate_bps, qs.shaper_rate_bps ? static_cast<uint32_t>(qs.shaper_burst_bytes) : 0u};
  }
  sp.shaper = {s.port_shaper_rate_bps,
               s.port_shaper_rate_bps ? static_cast<uint32_t>(s.port_shaper_burst_bytes) : 0u};
  // ECN per queue.
  for (int q = 0; q < 8; ++q) {
    if (s.ecn_override[q]) {
      c.ecn[q] = s.ecn_queue[q];
    } else {
      c.ecn[q] = s.ecn;
      if (s.ecn_lossless_only && !q_lossless[q]) c.ecn[q].mode = ecn::MarkerConfig::Mode::off;
    }
  }
  // PFC.
  sw::PfcConfig& f = c.pfc;
  f.enabled = pfc.enabled;
  f.priorities = 0;
  if (pfc.enabled)
    for (int p = 0; p < 8; ++p)
      if (pg_lossless[s.qos.tc_to_pg[s.qos.pcp_to_tc[p]]]) f.priorities |= static_cast<uint8_t>(1u << p);
  f.gen.dynamic_xoff = pfc.xoff_dynamic;
  f.gen.xoff_cells = cells(pfc.xoff_bytes, cell);
  using XonRule = pfc::GeneratorConfig::XonRule;
  f.gen.xon_rule = pfc.xon_rule == PfcSpec::Xon::absolute ? XonRule::absolute
                   : pfc.xon_rule == PfcSpec::Xon::ratio  ? XonRule::ratio
                                                          : XonRule::offset;
  f.gen.xon_offset_cells = pfc.xon_rule == PfcSpec::Xon::offset ? cells(pfc.xon_offset_bytes, cell) : 0;
  f.gen.xon_cells = pfc.xon_bytes / cell;
  f.gen.xon_ratio_q16 = pfc.xon_rule == PfcSpec::Xon::ratio ? pfc::xon_ratio_fixed(pfc.xon_ratio) : 0;
  f.pause_quanta = static_cast<uint16_t>(pfc.pause_quanta);
  f.refresh_ps = pfc.refresh_ps;
  f.response_ps = pfc.response_ps;
  f.watchdog = pfc.watchdog;
  f.wd_detection_ps = pfc.wd_detection_ps;
  f.wd_restoration_ps = pfc.wd_restoration_ps;
  f.wd_poll_ps = pfc.wd_poll_ps;
  f.wd_drop = pfc.wd_drop;
  return c;
}

namespace {

// pfc.watchdog (members of PfcSpec).
const KeyTable<PfcSpec>& watchdog_keys() {
  using S = PfcSpec;
  static const KeyTable<S> t{
      keys::boolean<S>("enabled", ROCESIM_MEMBER(watchdog), "the PFC watchdog on switch egress queues (as SONiC's)"),
      keys::time<S>("detection_time", ROCESIM_MEMBER(wd_detection_ps), 1, UINT64_MAX,
                    "a queue paused with packets and nothing sent for this long is declared stormed"),
      keys::time<S>("restoration_time", ROCESIM_MEMBER(wd_restoration_ps), 1, UINT64_MAX,
                    "a stormed queue is restored after its priority has not been paused for this long"),
      keys::time<S>("poll_interval", ROCESIM_MEMBER(wd_poll_ps), 1, UINT64_MAX, "how often the watchdog looks"),
      keys::choice<S>(
          "action", {"drop", "forward"}, [](const S& p) { return std::string(p.wd_drop ? "drop" : "forward"); },
          [](S& p, const std::string& w) { p.wd_drop = w == "drop"; },
          "while stormed: drop the queue's packets (reason `pfc_watchdog`), or send them ignoring the pause"),
  };
  return t;
}

const KeyTable<PfcSpec>& pfc_keys() {
  using S = PfcSpec;
  static const KeyTable<S> t{
      keys::boolean<S>("enabled", ROCESIM_MEMBER(enabled),
                       "`false`: no pause frames, and the lossless PGs become lossy (nothing holds their senders back)"),
      {"xoff", "`dynamic` or size", "XOFF when a PG's shared use reaches the MMU's dynamic threshold, or this static "
                                    "size; also when a packet has to go into headroom",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.str(k, "dynamic") != "dynamic") {
           p.xoff_dynamic = false;
           p.xoff_bytes = n.size(k, 0, 1);
         }
       },
       [](const S& p) { return p.xoff_dynamic ? std::string("dynamic") : core::format_size(p.xoff_bytes); }},
      // The three XON rules: at most one given (read_pfc checks), the one in force written.
      {"xon_offset", "size", "XON when shared use falls below the XOFF threshold minus this (SONiC)",
       [](const CfgNode& n, const std::string& k, S& p) { p.xon_offset_bytes = n.size(k, p.xon_offset_bytes); },
       [](const S& p) {
         return p.xon_rule == PfcSpec::Xon::offset ? core::format_size(p.xon_offset_bytes) : std::string();
       }},
      {"xon", "size", "instead: XON when shared use is at or below this",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.has(k)) {
           p.xon_rule = PfcSpec::Xon::absolute;
           p.xon_bytes = n.size(k);
         }
       },
       [](const S& p) { return p.xon_rule == PfcSpec::Xon::absolute ? core::format_size(p.xon_bytes) : std::string(); },
       "none"},
      {"xon_ratio", "number, 0 .. 1",
       "instead: XON at or below ratio x XOFF threshold (`0.5` is the seed's \"low = half of high\"); held as "
       "floor(ratio x 2^16) / 2^16 and compared exactly in integers, so the XON level is floor(q16 x threshold / "
       "2^16) cells",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.has(k)) {
           p.xon_rule = PfcSpec::Xon::ratio;
           p.xon_ratio = n.real(k, p.xon_ratio, 0.0, 1.0);
         }
       },
       [](const S& p) { return p.xon_rule == PfcSpec::Xon::ratio ? real_text(p.xon_ratio) : std::string(); },
       "none"},
      keys::integer<S>("pause_quanta", ROCESIM_MEMBER(pause_quanta), 1, 65535,
                       "timer in XOFF frames of switches and of NICs with `hosts.rx_buffer` (quanta of 512 bit "
                       "times at the port's speed)"),
      {"refresh", "`auto` or time",
       "while a switch PG or a NIC receive buffer (`hosts.rx_buffer`) stays XOFF, the XOFF is re-sent every this "
       "long after the XOFF transition (exactly: transition + k x period); `auto` = half the pause time at the "
       "port's speed, floor(ceil(quanta x 512 bit times in ps) / 2). A time must be shorter than the pause time at "
       "every port that sends XOFF (every switch port, and NIC ports with `hosts.rx_buffer` PFC), i.e. at the "
       "fastest of them, or the run is rejected at load (exit 2); leave a margin for a frame in progress on the "
       "wire, which delays a refresh by up to its wire time",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.str(k, "auto") != "auto") p.refresh_ps = n.time(k, 0, 1);
       },
       [](const S& p) { return p.refresh_ps ? core::format_time(p.refresh_ps) : std::string("auto"); }},
      keys::time<S>("mac_response_delay", ROCESIM_MEMBER(response_ps), 0, 1000000000,
                    "a received pause takes effect this long after its last bit (switches and NICs)"),
      {"headroom", "`profile`, `auto` or size",
       "per lossless PG: `mmu.pg_lossless.headroom`, the SONiC formula per port (below), or this size",
       [](const CfgNode& n, const std::string& k, S& p) {
         const std::string hr = n.str(k, "profile");
         if (hr == "auto") {
           p.headroom = PfcSpec::Headroom::automatic;
         } else if (hr != "profile") {
           p.headroom = PfcSpec::Headroom::fixed;
           p.headroom_bytes = n.size(k, 0, 1);
         }
       },
       [](const S& p) {
         return p.headroom == PfcSpec::Headroom::automatic ? std::string("auto")
                : p.headroom == PfcSpec::Headroom::fixed   ? core::format_size(p.headroom_bytes)
                                                           : std::string("profile");
       }},
      keys::size<S>("headroom_mac_phy_delay", ROCESIM_MEMBER(mac_phy_delay_bytes), 0, UINT64_MAX,
                    "MAC/PHY delay term of the formula"),
      keys::real<S>("headroom_cell_occupancy", ROCESIM_MEMBER(cell_occupancy), 0.1, 64.0,
                    "cell occupancy factor of the formula"),
      {"watchdog", "map", "the PFC watchdog: the keys `watchdog.*` below",
       [](const CfgNode& n, const std::string& k, S& p) {
         const CfgNode w = n.map(k);
         read_keys(watchdog_keys(), w, p);
         w.finish();
       },
       [](const S& p) { return emit_flow(watchdog_keys(), p); }, "`{enabled: false, ...}`"},
      {"storm", "`{host, start, priority}`",
       "a NIC that stops draining: from `start`, `host` keeps its switch port paused on `priority` (XOFF re-sent "
       "at half the pause time)",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (!n.has(k)) {
           (void)n.map(k);
           return;
         }
         const CfgNode st = n.map(k);
         p.storm = true;
         p.storm_host = st.str("host");  // checked against the topology by read_pfc
         p.storm_start_ps = st.time("start", 0);
         p.storm_priority = static_cast<uint32_t>(st.integer("priority", 3, 0, 7));
         st.finish();
       },
       [](const S& p) {
         return p.storm ? "{host: " + yaml_quote(p.storm_host) + ", start: " + core::format_time(p.storm_start_ps) +
                              ", priority: " + std::to_string(p.storm_priority) + "}"
                        : std::string();
       },
       "none"},
  };
  return t;
}

}  // namespace

PfcSpec read_pfc(const CfgNode& n, uint32_t hosts) {
  PfcSpec p;
  const int rules = n.has("xon_offset") + n.has("xon") + n.has("xon_ratio");
  if (rules > 1) n.fail("give one of xon_offset, xon and xon_ratio");
  read_keys(pfc_keys(), n, p);
  if (p.storm) p.storm_host_index = host_ref(n.map("storm"), "host", p.storm_host, hosts);
  n.finish();
  return p;
}

std::string pfc_key_reference() {
  return reference_header() + reference_rows(pfc_keys(), PfcSpec{}) +
         reference_rows(watchdog_keys(), PfcSpec{}, "watchdog.");
}

void check_pfc_refresh(const CfgNode& n, const PfcSpec& p, const std::vector<uint64_t>& rates) {
  if (!p.enabled || !p.refresh_ps || rates.empty()) return;
  const uint64_t fastest = *std::max_element(rates.begin(), rates.end());
  const uint64_t pause_ps = pfc::quanta_ps(p.pause_quanta, fastest);
  if (p.refresh_ps < pause_ps) return;
  n.fail_key("refresh", "refresh period " + core::format_time(p.refresh_ps) + " is not shorter than the pause time " +
                            core::format_time(pause_ps) + " (pause_quanta " + std::to_string(p.pause_quanta) +
                            " x 512 bit times at " + core::format_rate(fastest) +
                            ", the fastest port that sends XOFF): the pause would expire before it is refreshed");
}

std::string emit_pfc(const PfcSpec& p) { return emit_keys(pfc_keys(), p, "  "); }

void check_switch_config(const SwitchSpec& s, const PfcSpec& pfc, const std::vector<PortPhys>& ports,
                         uint32_t max_frame_bytes, const CfgNode& where) {
  const uint32_t nports = static_cast<uint32_t>(ports.size());
  // A profile whose pool has no cells leaves its PGs or queues without a pool.
  const std::pair<const char*, const ProfileSpec*> profiles[] = {
      {"pg_lossless", &s.pg_lossless}, {"pg_lossy", &s.pg_lossy}, {"queue_lossless", &s.queue_lossless},
      {"queue_lossy", &s.queue_lossy}};
  const uint64_t sizes[] = {s.ingress_lossless_pool, s.ingress_lossy_pool, s.egress_lossless_pool, s.egress_lossy_pool};
  for (const auto& [name, prof] : profiles) {
    if (sizes[pool_index(prof->pool)] == 0)
      where.fail(std::string("profile '") + name + "' maps its PGs or queues to pool '" + prof->pool +
                 "', which has no cells (size 0B)");
  }
  const sw::SwitchConfig c = make_switch_config(s, pfc, ports, max_frame_bytes);
  const std::vector<std::string> serr = sched::validate(c.sched);
  if (!serr.empty()) where.fail("invalid scheduler configuration: " + serr.front());
  const std::vector<std::string> errors = mmu::validate(c.mmu);
  if (!errors.empty())
    where.fail("invalid buffer configuration for a " + std::to_string(nports) + "-port switch: " + errors.front() +
               (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : ""));
}

namespace {
void emit_profile(std::ostringstream& o, const char* name, const ProfileSpec& p, bool headroom) {
  o << "    " << name << ": {pool: " << p.pool << ", reserved: " << core::format_size(p.reserved_bytes);
  if (p.dynamic) {
    o << ", dynamic_th: " << p.dynamic_th;
  } else {
    o << ", static_th: " << core::format_size(p.static_bytes);
  }
  if (headroom) o << ", headroom: " << core::format_size(p.headroom_bytes);
  o << "}\n";
}
template <size_t N>
void emit_list(std::ostringstream& o, const char* name, const std::array<uint8_t, N>& a) {
  o << "    " << name << ": [";
  for (size_t i = 0; i < N; ++i) o << (i ? ", " : "") << int(a[i]);
  o << "]\n";
}
}  // namespace

std::string emit_switch(const SwitchSpec& s) {
  std::ostringstream o;
  o << "  clock_period: " << core::format_time(s.clock_period_ps) << "\n";
  o << "  pipeline: {parser: " << s.cycles.parser << ", lookup: " << s.cycles.lookup << ", mmu: " << s.cycles.mmu
    << ", egress: " << s.cycles.egress << "}\n";
  o << "  cut_through: " << (s.cut_through ? "true" : "false") << "\n";
  o << "  buffer: {size: " << core::format_size(s.buffer_bytes) << ", cell: " << core::format_size(s.cell_bytes)
    << ", write_cells_per_cycle: " << s.write_cells_per_cycle << ", read_cells_per_cycle: " << s.read_cells_per_cycle
    << "}\n";
  o << "  mmu:\n";
  o << "    pools: {ingress_lossless: " << core::format_size(s.ingress_lossless_pool)
    << ", ingress_lossy: " << core::format_size(s.ingress_lossy_pool)
    << ", egress_lossless: " << core::format_size(s.egress_lossless_pool)
    << ", egress_lossy: " << core::format_size(s.egress_lossy_pool) << "}\n";
  o << "    shared_headroom: " << core::format_size(s.shared_headroom_bytes) << "\n";
  o << "    lossless_pgs: [";
  for (size_t i = 0; i < s.lossless_pgs.size(); ++i) o << (i ? ", " : "") << s.lossless_pgs[i];
  o << "]\n";
  emit_profile(o, "pg_lossless", s.pg_lossless, true);
  emit_profile(o, "pg_lossy", s.pg_lossy, false);
  emit_profile(o, "queue_lossless", s.queue_lossless, false);
  emit_profile(o, "queue_lossy", s.queue_lossy, false);
  o << "  qos:\n";
  o << "    trust: " << (s.qos.trust_dscp ? "dscp" : "pcp") << "\n";
  o << "    dscp_to_tc: {";
  bool first = true;
  for (int d = 0; d < 64; ++d) {
    if (!s.qos.dscp_to_tc[d]) continue;
    o << (first ? "" : ", ") << d << ": " << int(s.qos.dscp_to_tc[d]);
    first = false;
  }
  o << "}\n";
  emit_list(o, "pcp_to_tc", s.qos.pcp_to_tc);
  emit_list(o, "tc_to_queue", s.qos.tc_to_queue);
  emit_list(o, "tc_to_pg", s.qos.tc_to_pg);
  o << "  hash_seed: " << s.hash_seed << "\n";
  o << "  scheduler:\n    quantum: "
    << (s.sched_quantum_bytes ? core::format_size(s.sched_quantum_bytes) : std::string("auto")) << "\n    queues: {";
  for (int q = 0; q < 8; ++q) {
    const SwitchSpec::QueueSched& qs = s.sched_queues[q];
    o << (q ? ", " : "") << q << ": {mode: " << (qs.strict ? "strict" : "dwrr") << ", weight: " << qs.weight;
    if (qs.shaper_rate_bps)
      o << ", shaper: {rate: " << core::format_rate(qs.shaper_rate_bps)
        << ", burst: " << core::format_size(qs.shaper_burst_bytes) << "}";
    o << "}";
  }
  o << "}\n    shaper: {rate: " << core::format_rate(s.port_shaper_rate_bps)
    << ", burst: " << core::format_size(s.port_shaper_burst_bytes) << "}\n";
  auto marker = [&](const ecn::MarkerConfig& c) {
    const bool cells = c.unit == ecn::MarkerConfig::Unit::cells;
    auto amount = [&](uint64_t v) { return cells ? std::to_string(v) : core::format_size(v); };
    std::ostringstream m;
    m << "mode: " << ecn::mode_name(c.mode) << ", point: " << ecn::point_name(c.point)
      << ", unit: " << ecn::unit_name(c.unit) << ", k: " << amount(c.k) << ", kmin: " << amount(c.kmin)
      << ", kmax: " << amount(c.kmax) << ", pmax: " << real_text(c.pmax) << ", k_high: " << amount(c.k_high)
      << ", k_low: " << amount(c.k_low);
    return m.str();
  };
  o << "  ecn: {" << marker(s.ecn) << ", lossless_only: " << (s.ecn_lossless_only ? "true" : "false") << ",\n";
  o << "        queues: {";
  bool qfirst = true;
  for (int q = 0; q < 8; ++q) {
    if (!s.ecn_override[q]) continue;
    o << (qfirst ? "" : ", ") << q << ": {" << marker(s.ecn_queue[q]) << "}";
    qfirst = false;
  }
  o << "}}\n";
  return o.str();
}

}  // namespace rocesim::sim
