#include "sim/switch_config.h"

#include <algorithm>
#include <sstream>

#include "core/rng.h"
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

const std::vector<std::string> kPoolNames{"ingress_lossless", "ingress_lossy", "egress_lossless", "egress_lossy"};

uint32_t pool_index(const std::string& name) {
  return static_cast<uint32_t>(std::find(kPoolNames.begin(), kPoolNames.end(), name) - kPoolNames.begin());
}

uint32_t cells(uint64_t bytes, uint32_t cell) { return static_cast<uint32_t>((bytes + cell - 1) / cell); }

mmu::Threshold threshold_of(const ProfileSpec& p, uint32_t cell) {
  mmu::Threshold t;
  t.mode = p.dynamic ? mmu::ThresholdMode::dynamic_th : mmu::ThresholdMode::static_th;
  t.dynamic_th = p.dynamic_th;
  t.static_cells = cells(p.static_bytes, cell);
  return t;
}

// ---------------------------------------------------------------------------
// Key tables of `switch:` (config_util.h): each reads its keys (absent keys
// keep the value already there: the defaults of SwitchSpec), writes them back
// for config.resolved.yaml and describes them for docs/config.md.

const KeyTable<SwitchSpec>& pipeline_keys() {
  using S = SwitchSpec;
  static const KeyTable<S> t{
      keys::integer<S>("parser", ROCESIM_MEMBER(cycles.parser), 0, 100000, "parser stage, cycles"),
      keys::integer<S>("lookup", ROCESIM_MEMBER(cycles.lookup), 0, 100000, "forwarding lookup, cycles"),
      keys::integer<S>("mmu", ROCESIM_MEMBER(cycles.mmu), 0, 100000, "MMU admission, cycles"),
      keys::integer<S>("egress", ROCESIM_MEMBER(cycles.egress), 0, 100000,
                       "queueing and scheduling after the buffer write, cycles"),
  };
  return t;
}

const KeyTable<SwitchSpec>& buffer_keys() {
  using S = SwitchSpec;
  static const KeyTable<S> t{
      // The cell first: the size's lower bound is one cell.
      keys::size<S>("cell", ROCESIM_MEMBER(cell_bytes), 64, 16384,
                    "cell size; a packet takes ceil(frame / cell) cells"),
      {"size", "size, `buffer.cell` .. 4GiB", "packet buffer memory; whole cells (the remainder is unused)",
       [](const CfgNode& n, const std::string& k, S& s) {
         s.buffer_bytes = n.size(k, s.buffer_bytes, s.cell_bytes, 4ull << 30);
       },
       [](const S& s) { return core::format_size(s.buffer_bytes); }},
      keys::integer<S>("write_cells_per_cycle", ROCESIM_MEMBER(write_cells_per_cycle), 1, 4096,
                       "memory write bandwidth; more cells in a cycle wait for the next"),
      keys::integer<S>("read_cells_per_cycle", ROCESIM_MEMBER(read_cells_per_cycle), 1, 4096,
                       "memory read bandwidth; more cells in a cycle wait for the next"),
  };
  return t;
}

const KeyTable<SwitchSpec>& pools_keys() {
  using S = SwitchSpec;
  static const KeyTable<S> t{
      keys::size<S>("ingress_lossless", ROCESIM_MEMBER(ingress_lossless_pool), 0, UINT64_MAX,
                    "shared size of the ingress lossless service pool"),
      keys::size<S>("ingress_lossy", ROCESIM_MEMBER(ingress_lossy_pool), 0, UINT64_MAX,
                    "shared size of the ingress lossy service pool"),
      keys::size<S>("egress_lossless", ROCESIM_MEMBER(egress_lossless_pool), 0, UINT64_MAX,
                    "shared size of the egress lossless service pool"),
      keys::size<S>("egress_lossy", ROCESIM_MEMBER(egress_lossy_pool), 0, UINT64_MAX,
                    "shared size of the egress lossy service pool"),
  };
  return t;
}

// A buffer profile (SONiC BUFFER_PROFILE); `headroom` only in lossless PG profiles.
KeyTable<ProfileSpec> make_profile_keys(bool headroom) {
  using S = ProfileSpec;
  KeyTable<S> t{
      keys::choice<S>(
          "pool", kPoolNames, [](const S& p) { return p.pool; }, [](S& p, const std::string& w) { p.pool = w; },
          "service pool the profile's shared use counts against"),
      keys::size<S>("reserved", ROCESIM_MEMBER(reserved_bytes), 0, UINT64_MAX,
                    "guaranteed (reserved) bytes per PG or queue (SONiC `size`)"),
      // dynamic_th and static_th: one of the two; the one in force is written.
      {"dynamic_th", "integer, " + std::to_string(mmu::kMinDynamicTh) + " .. " + std::to_string(mmu::kMaxDynamicTh),
       "dynamic threshold N: alpha = 2^N, shared limit alpha x (pool size - pool used) (Choudhury & Hahne)",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.has(k)) {
           if (n.has("static_th")) n.fail_key("static_th", "give either dynamic_th or static_th, not both");
           p.dynamic = true;
         }
         p.dynamic_th = static_cast<int>(n.integer(k, p.dynamic_th, mmu::kMinDynamicTh, mmu::kMaxDynamicTh));
       },
       [](const S& p) { return p.dynamic ? std::to_string(p.dynamic_th) : std::string(); }},
      {"static_th", "size, at least 1B", "instead: a static cap on the shared use",
       [](const CfgNode& n, const std::string& k, S& p) {
         if (n.has(k)) {
           p.dynamic = false;
           p.static_bytes = n.size(k, p.static_bytes, 1);
         }
       },
       [](const S& p) { return p.dynamic ? std::string() : core::format_size(p.static_bytes); }, "none"},
  };
  if (headroom)
    t.push_back(keys::size<S>("headroom", ROCESIM_MEMBER(headroom_bytes), 0, UINT64_MAX,
                              "per-PG headroom (SONiC `xoff`) with `pfc.headroom: profile`"));
  return t;
}
const KeyTable<ProfileSpec>& pg_profile_keys() {
  static const KeyTable<ProfileSpec> t = make_profile_keys(true);
  return t;
}
const KeyTable<ProfileSpec>& profile_keys() {
  static const KeyTable<ProfileSpec> t = make_profile_keys(false);
  return t;
}

std::string profile_default(const ProfileSpec& p) { return "`" + emit_flow(profile_keys(), p) + "`"; }

const KeyTable<SwitchSpec>& mmu_keys() {
  using S = SwitchSpec;
  static const S d{};
  static const KeyTable<S> t{
      keys::map<S>("pools", ROCESIM_SELF, &pools_keys, "the four service pools: the keys `mmu.pools.*` below",
                   "`" + emit_flow(pools_keys(), d) + "`"),
      keys::size<S>("shared_headroom", ROCESIM_MEMBER(shared_headroom_bytes), 0, UINT64_MAX,
                    "shared headroom pool; `0` reserves each lossless PG its own headroom"),
      {"lossless_pgs", "list of 0 .. 7", "PFC-enabled priority groups (SONiC default 3, 4)",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (!n.has(k)) return;
         s.lossless_pgs.clear();
         for (const CfgNode& e : n.seq(k)) s.lossless_pgs.push_back(static_cast<uint32_t>(e.as_integer(0, 7)));
       },
       [](const S& s) {
         std::string o;
         for (uint32_t pg : s.lossless_pgs) o += (o.empty() ? "" : ", ") + std::to_string(pg);
         return "[" + o + "]";
       }},
      keys::map<S>("pg_lossless", ROCESIM_MEMBER(pg_lossless), &pg_profile_keys,
                   "ingress profile of lossless PGs (keys: `pool`, `reserved`, `dynamic_th` or `static_th`, "
                   "`headroom`)",
                   "`" + emit_flow(pg_profile_keys(), d.pg_lossless) + "`"),
      keys::map<S>("pg_lossy", ROCESIM_MEMBER(pg_lossy), &profile_keys,
                   "ingress profile of the other PGs (keys: `pool`, `reserved`, `dynamic_th` or `static_th`)",
                   profile_default(d.pg_lossy)),
      keys::map<S>("queue_lossless", ROCESIM_MEMBER(queue_lossless), &profile_keys,
                   "egress profile of queues that carry a lossless PG's traffic", profile_default(d.queue_lossless)),
      keys::map<S>("queue_lossy", ROCESIM_MEMBER(queue_lossy), &profile_keys, "egress profile of the other queues",
                   profile_default(d.queue_lossy)),
  };
  return t;
}

// A QoS map of 8 entries 0..7 (index: PCP or TC).
Key<sw::QosConfig> u8_list(std::string name, std::array<uint8_t, 8> sw::QosConfig::*member, std::string doc) {
  using S = sw::QosConfig;
  return {name, "list of 8, each 0 .. 7", std::move(doc),
          [member](const CfgNode& n, const std::string& k, S& q) {
            if (!n.has(k)) return;
            const std::vector<CfgNode> items = n.seq(k);
            if (items.size() != 8) n.fail_key(k, "expected a list of 8 entries");
            for (size_t i = 0; i < 8; ++i) (q.*member)[i] = static_cast<uint8_t>(items[i].as_integer(0, 7));
          },
          [member](const S& q) {
            std::string o;
            for (uint8_t v : q.*member) o += (o.empty() ? "" : ", ") + std::to_string(v);
            return "[" + o + "]";
          }};
}

const KeyTable<sw::QosConfig>& qos_keys() {
  using S = sw::QosConfig;
  static const KeyTable<S> t{
      keys::choice<S>(
          "trust", {"dscp", "pcp"}, [](const S& q) { return std::string(q.trust_dscp ? "dscp" : "pcp"); },
          [](S& q, const std::string& w) { q.trust_dscp = w == "dscp"; },
          "which field picks the traffic class (untagged frames under `pcp` use TC 0)"),
      {"dscp_to_tc", "map DSCP (0 .. 63) -> TC (0 .. 7)",
       "RoCE data (DSCP 24, 26) on TC 3, CNP (DSCP 48) on 6; a given map replaces the default, DSCPs not in it "
       "map to TC 0",
       [](const CfgNode& n, const std::string& k, S& q) {
         if (!n.has(k)) {
           (void)n.map(k);
           return;
         }
         const CfgNode map = n.map(k);
         q.dscp_to_tc.fill(0);
         for (const std::string& key : map.keys()) {
           int64_t dscp = -1;
           try {
             size_t used = 0;
             dscp = std::stoll(key, &used);
             if (used != key.size()) dscp = -1;
           } catch (...) {
             dscp = -1;
           }
           if (dscp < 0 || dscp > 63) map.fail_key(key, "DSCP keys must be integers 0..63");
           q.dscp_to_tc[static_cast<size_t>(dscp)] = static_cast<uint8_t>(map.integer(key, 0, 0, 7));
         }
         map.finish();
       },
       [](const S& q) {
         std::string o;
         for (int d = 0; d < 64; ++d)
           if (q.dscp_to_tc[d]) o += (o.empty() ? "" : ", ") + std::to_string(d) + ": " + std::to_string(q.dscp_to_tc[d]);
         return "{" + o + "}";
       }},
      u8_list("pcp_to_tc", &S::pcp_to_tc, "traffic class of each PCP (SONiC DOT1P_TO_TC_MAP)"),
      u8_list("tc_to_queue", &S::tc_to_queue, "egress queue of each traffic class (SONiC TC_TO_QUEUE_MAP)"),
      u8_list("tc_to_pg", &S::tc_to_pg, "priority group of each traffic class (SONiC TC_TO_PRIORITY_GROUP_MAP)"),
  };
  return t;
}

constexpr uint64_t kMaxShaperRate = 10000000000000ull;  // 10 Tbps

const KeyTable<SwitchSpec::Shaper>& shaper_keys() {
  using S = SwitchSpec::Shaper;
  static const KeyTable<S> t{
      keys::rate<S>("rate", ROCESIM_MEMBER(rate_bps), 0, kMaxShaperRate, "token rate; `0bps` is no shaper"),
      keys::size<S>("burst", ROCESIM_MEMBER(burst_bytes), 0, 1 << 20, "bucket depth"),
  };
  return t;
}

const KeyTable<SwitchSpec::QueueSched>& queue_sched_keys() {
  using S = SwitchSpec::QueueSched;
  static const KeyTable<S> t{
      keys::choice<S>(
          "mode", {"strict", "dwrr"}, [](const S& q) { return std::string(q.strict ? "strict" : "dwrr"); },
          [](S& q, const std::string& w) { q.strict = w == "strict"; },
          "`strict` (strict queues first, the higher queue wins) or `dwrr`"),
      keys::integer<S>("weight", ROCESIM_MEMBER(weight), 1, 1000, "DWRR weight: the queue's quantum is weight x quantum"),
      // Written only when shaped, so the resolved config stays short.
      {"shaper", "`{rate, burst}`", "token bucket on the queue (`rate`, `burst` as `scheduler.shaper`)",
       [](const CfgNode& n, const std::string& k, S& q) {
         const CfgNode m = n.map(k);
         read_keys(shaper_keys(), m, q.shaper);
         m.finish();
       },
       [](const S& q) { return q.shaper.rate_bps ? emit_flow(shaper_keys(), q.shaper) : std::string(); }, "none"},
  };
  return t;
}

// A map with keys "0".."7" (egress queues); each present entry read by `one`.
void read_queue_map(const CfgNode& n, const std::string& key, const std::function<void(const CfgNode&, int)>& one) {
  const CfgNode m = n.map(key);
  for (const std::string& k : m.keys()) {
    if (k.size() != 1 || k[0] < '0' || k[0] > '7') m.fail_key(k, "queue keys are 0..7");
    one(m.map(k), k[0] - '0');
  }
  m.finish();
}

const KeyTable<SwitchSpec>& scheduler_keys() {
  using S = SwitchSpec;
  static const KeyTable<S> t = [] {
    KeyTable<S> t{
      {"quantum", "`auto` or size, 64B .. 1MiB",
       "DWRR quantum of weight 1 (weight w gets w x quantum); `auto` = the largest frame (`hosts.mtu` + 82 B), the "
       "smallest that lets every turn send",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (n.str(k, "auto") != "auto") s.sched_quantum_bytes = n.size(k, 0, 64, 1 << 20);
       },
       [](const S& s) { return s.sched_quantum_bytes ? core::format_size(s.sched_quantum_bytes) : std::string("auto"); }},
      {"queues", "map queue (0 .. 7) -> `{mode, weight, shaper}`",
       "per egress queue: `mode`, `weight` and `shaper` (the keys `scheduler.queues.Q.*` below); queues not given "
       "keep their defaults",
       [](const CfgNode& n, const std::string& k, S& s) {
         read_queue_map(n, k, [&s](const CfgNode& q, int i) {
           read_keys(queue_sched_keys(), q, s.sched_queues[i]);
           q.finish();
         });
       },
       [](const S& s) {
         std::string o;
         for (int q = 0; q < 8; ++q)
           o += (q ? ", " : "") + std::to_string(q) + ": " + emit_flow(queue_sched_keys(), s.sched_queues[q]);
         return "{" + o + "}";
       },
       "6, 7 strict; 0 .. 5 `dwrr` weight 1"},
      keys::map<S>("shaper", ROCESIM_MEMBER(port_shaper), &shaper_keys,
                   "token bucket on the whole port, after the queue choice (`rate`, `burst`)",
                   "`" + emit_flow(shaper_keys(), SwitchSpec::Shaper{}) + "` (no shaper)"),
    };
    // `queues:` in block form: one line per queue.
    t[1].block = [](const S& s, const std::string& indent) {
      std::string o;
      for (int q = 0; q < 8; ++q) o += indent + std::to_string(q) + ": " + emit_flow(queue_sched_keys(), s.sched_queues[q]) + "\n";
      return o;
    };
    return t;
  }();
  return t;
}

// One ECN marker with the switch's cell size (a `unit` converts thresholds).
struct MarkerSpec {
  ecn::MarkerConfig c;
  uint32_t cell_bytes = 256;
};

// A threshold: a size in bytes, or a plain integer of cells with `unit: cells`.
Key<MarkerSpec> amount(std::string name, uint64_t ecn::MarkerConfig::*member, std::string doc) {
  return {name, "size, or integer cells with `unit: cells`", std::move(doc),
          [member](const CfgNode& n, const std::string& k, MarkerSpec& m) {
            uint64_t& v = m.c.*member;
            v = m.c.unit == ecn::MarkerConfig::Unit::cells
                    ? static_cast<uint64_t>(n.integer(k, static_cast<int64_t>(v), 0, INT64_MAX))
                    : n.size(k, v);
          },
          [member](const MarkerSpec& m) {
            const uint64_t v = m.c.*member;
            return m.c.unit == ecn::MarkerConfig::Unit::cells ? std::to_string(v) : core::format_size(v);
          }};
}

const KeyTable<MarkerSpec>& marker_keys() {
  using S = MarkerSpec;
  using M = ecn::MarkerConfig;
  static const KeyTable<S> t{
      keys::choice<S>(
          "mode", {"off", "threshold", "wred", "hysteresis"}, [](const S& m) { return std::string(ecn::mode_name(m.c.mode)); },
          [](S& m, const std::string& w) {
            m.c.mode = w == "off" ? M::Mode::off : w == "threshold" ? M::Mode::threshold : w == "wred" ? M::Mode::wred
                                                                                                   : M::Mode::hysteresis;
          },
          "ECN marker of the egress queues (below)"),
      keys::choice<S>(
          "point", {"enqueue", "dequeue"}, [](const S& m) { return std::string(ecn::point_name(m.c.point)); },
          [](S& m, const std::string& w) { m.c.point = w == "enqueue" ? M::Point::enqueue : M::Point::dequeue; },
          "when the queue is measured and the packet marked"),
      // Before the thresholds: a `unit` different from the inherited one
      // converts the inherited thresholds first (ecn::MarkerConfig::in_unit:
      // bytes -> cells rounded up at the cell size), so `unit: cells` alone
      // gives the byte defaults in cells, not 100000 cells.
      keys::choice<S>(
          "unit", {"bytes", "cells"}, [](const S& m) { return std::string(ecn::unit_name(m.c.unit)); },
          [](S& m, const std::string& w) { m.c = m.c.in_unit(w == "cells" ? M::Unit::cells : M::Unit::bytes, m.cell_bytes); },
          "what the queue length and the thresholds count. With `cells` (what the RTL counts) thresholds are "
          "integers of cells, and those not given are the byte values converted at `buffer.cell`, rounded up: the "
          "defaults become 391, 391, 1563, 782, 391 cells at 256 B. A per-queue `unit` converts what it inherits "
          "the same way (cells to bytes: times the cell size)"),
      amount("k", &M::k, "`threshold`: mark when the queue exceeds K (q > K)"),
      amount("kmin", &M::kmin, "`wred`: no mark at or below Kmin"),
      amount("kmax", &M::kmax, "`wred`: probability Pmax (q-Kmin)/(Kmax-Kmin) up to Kmax, always above"),
      {"pmax", "number, 0 .. 1", "`wred`: the probability at Kmax, used as round(Pmax x 2^32)",
       [](const CfgNode& n, const std::string& k, S& m) { m.c.pmax = n.real(k, m.c.pmax, 0.0, 1.0); },
       [](const S& m) { return real_text(m.c.pmax); }},
      amount("k_high", &M::k_high, "`hysteresis`: start marking above K_high"),
      amount("k_low", &M::k_low, "`hysteresis`: stop below K_low"),
  };
  return t;
}

// The marker keys of `m` from n (its own validation); the caller finishes n.
void read_marker(const CfgNode& n, ecn::MarkerConfig& c, uint32_t cell_bytes) {
  MarkerSpec m{c, cell_bytes};
  read_keys(marker_keys(), n, m);
  c = m.c;
  const std::vector<std::string> errs = c.validate();
  if (!errs.empty()) n.fail(errs.front());
}
std::string marker_text(const ecn::MarkerConfig& c) {
  const std::string f = emit_flow(marker_keys(), MarkerSpec{c, 0});
  return f.substr(1, f.size() - 2);  // without the braces
}

const KeyTable<SwitchSpec>& ecn_keys() {
  using S = SwitchSpec;
  static const KeyTable<S> t{
      {"marker", "", "", [](const CfgNode& n, const std::string&, S& s) { read_marker(n, s.ecn, s.cell_bytes); },
       [](const S& s) { return marker_text(s.ecn); }},
      keys::boolean<S>("lossless_only", ROCESIM_MEMBER(ecn_lossless_only),
                       "the marker applies to queues that carry lossless traffic; the others are off"),
      {"queues", "map queue (0 .. 7) -> marker",
       "per-queue overrides, e.g. `{3: {mode: threshold, k: 64KiB}}`; unset keys inherit the section's (also its "
       "`unit`, before this entry's `unit` converts them)",
       [](const CfgNode& n, const std::string& k, S& s) {
         read_queue_map(n, k, [&s](const CfgNode& q, int i) {
           s.ecn_override[i] = true;
           s.ecn_queue[i] = s.ecn;
           read_marker(q, s.ecn_queue[i], s.cell_bytes);
           q.finish();
         });
       },
       [](const S& s) {
         std::string o;
         for (int q = 0; q < 8; ++q)
           if (s.ecn_override[q]) o += (o.empty() ? "" : ", ") + std::to_string(q) + ": {" + marker_text(s.ecn_queue[q]) + "}";
         return "{" + o + "}";
       }},
  };
  return t;
}

// `ecn:` is one flat map: the marker's keys and the two of its own ("marker"
// stands for the marker's keys at the section's level). Flow and block forms.
std::string ecn_text(const SwitchSpec& s) {
  std::string o;
  for (const Key<SwitchSpec>& k : ecn_keys())
    o += (o.empty() ? "" : ", ") + (k.name == "marker" ? k.emit(s) : k.name + ": " + k.emit(s));
  return "{" + o + "}";
}
std::string ecn_block(const SwitchSpec& s, const std::string& indent) {
  std::string o = emit_keys(marker_keys(), MarkerSpec{s.ecn, s.cell_bytes}, indent);
  o += indent + "lossless_only: " + (s.ecn_lossless_only ? "true" : "false") + "\n";
  std::string q;
  for (int i = 0; i < 8; ++i)
    if (s.ecn_override[i]) q += indent + "  " + std::to_string(i) + ": {" + marker_text(s.ecn_queue[i]) + "}\n";
  return o + indent + "queues:" + (q.empty() ? " {}\n" : "\n" + q);
}

// switch.ecmp: the unit's keys (over ecmp::Config), then the section's
// (over EcmpSpec: the same keys on its base, and the two override maps).

const KeyTable<ecmp::Config>& ecmp_unit_keys() {
  using S = ecmp::Config;
  static const KeyTable<S> t{
      keys::choice<S>(
          "function", ecmp::function_names(), [](const S& c) { return std::string(ecmp::function_name(c.function)); },
          [](S& c, const std::string& w) {
            const auto& v = ecmp::function_names();
            c.function = static_cast<ecmp::Function>(std::find(v.begin(), v.end(), w) - v.begin());
          },
          "the hash (docs/ecmp.md): `crc16_arc` (CRC-16/ARC), `crc16_ccitt` (CRC-16/CCITT-FALSE), `crc32_hi`, "
          "`crc32_lo` (the upper or lower 16 bits of the Ethernet CRC-32), `xor16` (16-bit XOR fold), or "
          "`murmur3` (the model's former seeded fmix32 chain, kept as the default so outputs stay as they were)"),
      {"fields", "list of `src_ip`, `dst_ip`, `proto`, `sport`, `dport`, `dest_qp`, `in_port`",
       "the key: IPv4 source and destination, IP protocol, UDP source and destination port, BTH destination QP, "
       "ingress port; at least one",
       [](const CfgNode& n, const std::string& k, S& c) {
         if (!n.has(k)) return;
         const std::vector<CfgNode> items = n.seq(k);
         if (items.empty()) n.fail_key(k, "give at least one field: with none every packet hashes alike");
         const auto& names = ecmp::field_names();
         uint32_t f = 0;
         for (const CfgNode& e : items) {
           const std::string w = e.as_str();
           const auto it = std::find(names.begin(), names.end(), w);
           if (it == names.end()) {
             std::string all;
             for (const std::string& x : names) all += (all.empty() ? "" : ", ") + x;
             e.fail("unknown field '" + w + "' (fields: " + all + ")");
           }
           f |= 1u << (it - names.begin());
         }
         c.fields = f;
       },
       [](const S& c) {
         std::string o;
         for (size_t i = 0; i < ecmp::field_names().size(); ++i)
           if (c.fields & (1u << i)) o += (o.empty() ? "" : ", ") + ecmp::field_names()[i];
         return "[" + o + "]";
       }},
      keys::integer<S>("seed", ROCESIM_MEMBER(seed), 0, UINT32_MAX,
                       "mixed in as the hash's initial register (docs/ecmp.md); `0` derives one per switch from its "
                       "name and the run seed"),
      keys::boolean<S>("symmetric", ROCESIM_MEMBER(symmetric),
                       "hash the sorted address pair and the sorted port pair, so both directions of a flow hash "
                       "alike"),
      keys::choice<S>(
          "selection", ecmp::selection_names(),
          [](const S& c) { return std::string(ecmp::selection_name(c.selection)); },
          [](S& c, const std::string& w) { c.selection = w == "table" ? ecmp::Selection::table : ecmp::Selection::modulo; },
          "`modulo`: hash mod the members up; `table`: a table of 2^`table_bits` buckets filled with the members "
          "round-robin, rebuilt with minimal disruption when a member goes down or comes back"),
      keys::integer<S>("table_bits", ROCESIM_MEMBER(table_bits), 1, ecmp::kMaxTableBits,
                       "`table`: log2 of the buckets per group (the bucket: the hash's low bits)"),
      keys::integer<S>("hash_cycles", ROCESIM_MEMBER(hash_cycles), 0, 100000,
                       "ingress pipeline cycles of the hash, between the lookup and the MMU (docs/fidelity.md)"),
      keys::choice<S>(
          "load_balancing", ecmp::dlb_mode_names(),
          [](const S& c) { return ecmp::dlb_mode_names().at(static_cast<size_t>(c.dlb.mode)); },
          [](S& c, const std::string& w) {
            const auto& v = ecmp::dlb_mode_names();
            c.dlb.mode = static_cast<ecmp::DlbMode>(std::find(v.begin(), v.end(), w) - v.begin());
          },
          "how a group's member is chosen (docs/ecmp.md, \"Dynamic load balancing\"): `static` (the hash alone), "
          "`avoid_hot` (the seed article's rehash: a new flowlet avoids a member above `hot_threshold`), `flowlet` "
          "(a new flowlet takes the least loaded member by `flowlet_metric`), or per-packet spraying "
          "(`spray_random`, `spray_round_robin`: reorders RC traffic, for comparison). A flow never moves while "
          "it has packets queued on its member"),
      keys::time<S>("utilization_window", ROCESIM_MEMBER(dlb.window_ps), 1000, 1000000000000ull,
                    "time constant of a member's utilization estimate (an EWMA of its sent bytes, a CONGA DRE)"),
      keys::integer<S>("utilization_shift", ROCESIM_MEMBER(dlb.shift), 1, 16,
                       "the estimate decays by 2^-shift every utilization_window / 2^shift"),
      keys::real<S>("hot_threshold", ROCESIM_MEMBER(dlb.threshold), 0.0, 1.0,
                    "`avoid_hot`: utilization above which a member is hot (the seed: 0.8)"),
      keys::time<S>("flowlet_gap", ROCESIM_MEMBER(dlb.gap_ps), 1, 1000000000000ull,
                    "`avoid_hot`, `flowlet`: a flow may move after this long without a packet (and none queued)"),
      keys::choice<S>(
          "flowlet_metric", ecmp::load_metric_names(),
          [](const S& c) { return ecmp::load_metric_names().at(static_cast<size_t>(c.dlb.metric)); },
          [](S& c, const std::string& w) {
            const auto& v = ecmp::load_metric_names();
            c.dlb.metric = static_cast<ecmp::LoadMetric>(std::find(v.begin(), v.end(), w) - v.begin());
          },
          "`flowlet`: the load that picks a new flowlet's member: the bytes queued on the member's port, or its "
          "utilization estimate"),
      keys::integer<S>("flowlet_table_bits", ROCESIM_MEMBER(dlb.table_bits), 1, 20,
                       "`avoid_hot`, `flowlet`: log2 of the flowlet table's entries per group (flows sharing an "
                       "entry move together, as in hardware)"),
  };
  return t;
}

// Copies key i of ecmp_unit_keys() from `from` into `to` (an override's given key).
void copy_ecmp_key(size_t i, const ecmp::Config& from, ecmp::Config& to) {
  switch (i) {
    case 0: to.function = from.function; break;
    case 1: to.fields = from.fields; break;
    case 2: to.seed = from.seed; break;
    case 3: to.symmetric = from.symmetric; break;
    case 4: to.selection = from.selection; break;
    case 5: to.table_bits = from.table_bits; break;
    case 6: to.hash_cycles = from.hash_cycles; break;
    case 7: to.dlb.mode = from.dlb.mode; break;
    case 8: to.dlb.window_ps = from.dlb.window_ps; break;
    case 9: to.dlb.shift = from.dlb.shift; break;
    case 10: to.dlb.threshold = from.dlb.threshold; break;
    case 11: to.dlb.gap_ps = from.dlb.gap_ps; break;
    case 12: to.dlb.metric = from.dlb.metric; break;
    case 13: to.dlb.table_bits = from.dlb.table_bits; break;
    default: break;
  }
}

const std::vector<std::string> kSwitchRoles{"sw", "leaf", "spine", "tor", "agg", "core"};

// An override map (`tiers` or `switches`): name -> {unit keys}, each read over
// the section's values, only the given keys written back.
Key<EcmpSpec> ecmp_overrides(std::string name, std::vector<EcmpOverride> EcmpSpec::*member, bool roles,
                             std::string type, std::string doc) {
  using S = EcmpSpec;
  return {name, std::move(type), std::move(doc),
          [member, roles](const CfgNode& n, const std::string& k, S& s) {
            const CfgNode m = n.map(k);
            (s.*member).clear();
            for (const std::string& who : m.keys()) {
              if (roles && std::find(kSwitchRoles.begin(), kSwitchRoles.end(), who) == kSwitchRoles.end())
                m.fail_key(who, "unknown tier '" + who + "' (tiers are switch roles: sw, leaf, spine, tor, agg, core)");
              const CfgNode e = m.map(who);
              EcmpOverride o{who, s.c, 0};
              const KeyTable<ecmp::Config>& t = ecmp_unit_keys();
              for (size_t i = 0; i < t.size(); ++i) {
                if (e.has(t[i].name)) o.given |= 1u << i;
                t[i].read(e, t[i].name, o.c);
              }
              e.finish();
              (s.*member).push_back(o);
            }
            m.finish();
          },
          [member](const S& s) {
            std::string o;
            for (const EcmpOverride& e : s.*member) {
              std::string f;
              const KeyTable<ecmp::Config>& t = ecmp_unit_keys();
              for (size_t i = 0; i < t.size(); ++i)
                if (e.given & (1u << i)) f += (f.empty() ? "" : ", ") + t[i].name + ": " + t[i].emit(e.c);
              o += (o.empty() ? "" : ", ") + yaml_quote(e.name) + ": {" + f + "}";
            }
            return "{" + o + "}";
          },
          "none"};
}

const KeyTable<EcmpSpec>& ecmp_keys() {
  using S = EcmpSpec;
  static const KeyTable<S> t = [] {
    KeyTable<S> t;
    // The unit's keys on the section's base configuration.
    for (const Key<ecmp::Config>& k : ecmp_unit_keys()) {
      auto read = k.read;
      auto emit = k.emit;
      t.push_back({k.name, k.type, k.doc,
                   [read](const CfgNode& n, const std::string& key, S& s) { read(n, key, s.c); },
                   [emit](const S& s) { return emit(s.c); }});
    }
    t.push_back(ecmp_overrides("tiers", &S::tiers, true, "map role -> `{ecmp keys}`",
                               "per tier (switch role: `sw`, `leaf`, `spine`, `tor`, `agg`, `core`): keys over the "
                               "section's, e.g. `{spine: {function: crc32_lo}}`"));
    t.push_back(ecmp_overrides("switches", &S::switches, false, "map switch -> `{ecmp keys}`",
                               "per switch (by name): keys over its tier's, e.g. `{leaf0: {seed: 7}}`"));
    return t;
  }();
  return t;
}

// switch.analytics (docs/analytics.md): the block's parameters (over
// AnalyticsSpec, its analytics::Config in c), the rules and ports.

// "A.B.C.D/LEN" (LEN 0..32; without "/LEN" a host, /32) -> ip, len.
bool parse_prefix(const std::string& t, uint32_t& ip, uint8_t& len) {
  const size_t slash = t.find('/');
  const std::string a = t.substr(0, slash);
  uint32_t v = 0;
  int parts = 0;
  size_t i = 0;
  while (parts < 4) {
    size_t j = i;
    uint32_t o = 0;
    while (j < a.size() && a[j] >= '0' && a[j] <= '9' && j - i < 3) o = o * 10 + uint32_t(a[j++] - '0');
    if (j == i || o > 255) return false;
    v = v << 8 | o;
    ++parts;
    if (parts < 4) {
      if (j >= a.size() || a[j] != '.') return false;
      ++j;
    } else if (j != a.size()) {
      return false;
    }
    i = j;
  }
  uint32_t l = 32;
  if (slash != std::string::npos) {
    const std::string n = t.substr(slash + 1);
    if (n.empty() || n.size() > 2 || n.find_first_not_of("0123456789") != std::string::npos) return false;
    l = uint32_t(std::stoul(n));
    if (l > 32) return false;
  }
  ip = v;
  len = static_cast<uint8_t>(l);
  return true;
}

std::string prefix_text(uint32_t ip, uint8_t len) {
  return std::to_string(ip >> 24) + "." + std::to_string(ip >> 16 & 255) + "." + std::to_string(ip >> 8 & 255) + "." +
         std::to_string(ip & 255) + "/" + std::to_string(len);
}

const KeyTable<AnalyticsSpec>& analytics_keys() {
  using S = AnalyticsSpec;
  constexpr uint64_t kHourPs = 3600ull * 1000000000000ull;
  constexpr uint64_t kMaxRatePerS = 1000000000000ull;  // the block's bound (analytics::check_config)
  static const KeyTable<S> t{
      keys::boolean<S>("enabled", ROCESIM_MEMBER(enabled),
                       "flow analytics on every switch: matching, flow table, export; outputs `flow_records.jsonl`, "
                       "`flow_records.ipfix`, `flow_report.csv` and summary.json `analytics`"),
      keys::choice<S>(
          "mode", {"loss", "performance"},
          [](const S& a) { return std::string(a.c.mode == analytics::Mode::loss ? "loss" : "performance"); },
          [](S& a, const std::string& w) { a.c.mode = w == "loss" ? analytics::Mode::loss : analytics::Mode::performance; },
          "`loss`: every RoCEv2 frame on the analysed ports, rules installed automatically (no `rules`); "
          "`performance`: the frames the `rules` select (and their return direction)"),
      {"rules", "list of `{src, dst, qp}`",
       "`performance`: user ACL rules, at most `max_rules`: IPv4 prefixes `src` and `dst` (`A.B.C.D/LEN`, default "
       "`0.0.0.0/0`) and an optional `qp`, the Dest QP of the traffic src -> dst; the return-direction rule is "
       "installed with each",
       [](const CfgNode& n, const std::string& k, S& a) {
         if (!n.has(k)) {
           (void)n.seq(k);
           return;
         }
         a.rules.clear();
         for (const CfgNode& e : n.seq(k)) {
           analytics::Rule r;
           for (const char* key : {"src", "dst"}) {
             const std::string v = e.str(key, "0.0.0.0/0");
             uint32_t ip = 0;
             uint8_t len = 0;
             if (!parse_prefix(v, ip, len)) e.fail_key(key, "'" + v + "': expected an IPv4 prefix A.B.C.D/LEN (LEN 0..32)");
             (key[0] == 's' ? r.src_ip : r.dst_ip) = ip;
             (key[0] == 's' ? r.src_len : r.dst_len) = len;
           }
           r.has_qp = e.has("qp");
           if (r.has_qp) r.qp = static_cast<uint32_t>(e.integer("qp", 0, 0, 0xffffff));
           e.finish();
           a.rules.push_back(r);
         }
       },
       [](const S& a) {
         std::string o;
         for (const analytics::Rule& r : a.rules) {
           o += (o.empty() ? "{" : ", {") + std::string("src: ") + prefix_text(r.src_ip, r.src_len) +
                ", dst: " + prefix_text(r.dst_ip, r.dst_len);
           if (r.has_qp) o += ", qp: " + std::to_string(r.qp);
           o += "}";
         }
         return "[" + o + "]";
       }},
      keys::integer<S>("max_rules", ROCESIM_MEMBER(c.max_rules), 1, 4096, "`performance`: rules the block holds"),
      {"ports", "`all` or a list of port numbers",
       "the ingress ports analysed on every switch (a port a switch lacks is ignored on it)",
       [](const CfgNode& n, const std::string& k, S& a) {
         if (!n.has(k)) return;
         const CfgNode v = n.child(k);
         if (!v.is_seq()) {
           if (n.str(k) != "all") n.fail_key(k, "expected `all` or a list of port numbers");
           a.ports.clear();
           return;
         }
         a.ports.clear();
         const std::vector<CfgNode> items = n.seq(k);
         if (items.empty()) n.fail_key(k, "give at least one port (or `all`): with none nothing is analysed");
         for (const CfgNode& e : items) a.ports.push_back(static_cast<uint32_t>(e.as_integer(0, 65535)));
       },
       [](const S& a) {
         if (a.ports.empty()) return std::string("all");
         std::string o;
         for (uint32_t p : a.ports) o += (o.empty() ? "" : ", ") + std::to_string(p);
         return "[" + o + "]";
       }},
      keys::integer<S>("table_capacity", ROCESIM_MEMBER(c.table_capacity), 1, 1 << 24,
                       "flow table entries per switch; a setup finding it full is counted as not tracked"),
      keys::integer<S>("pending_capacity", ROCESIM_MEMBER(c.pending_capacity), 1, 1 << 24,
                       "CM REQs waiting for their REP and RTU"),
      keys::integer<S>("capacity_pps", ROCESIM_MEMBER(c.capacity_pps), 0, int64_t(kMaxRatePerS),
                       "the analyzer's processing capacity, mirrored packets per second; beyond it they are dropped "
                       "and counted (`capacity_dropped`); `0`: unlimited"),
      keys::integer<S>("capacity_burst", ROCESIM_MEMBER(c.capacity_burst), 1, 1000000,
                       "depth of the capacity's token bucket, packets (full at the start)"),
      keys::time<S>("timestamp_resolution", ROCESIM_MEMBER(c.timestamp_resolution_ps), 1, 1000000000000ull,
                    "every time the analyzer keeps is rounded down to a multiple of this"),
      keys::time<S>("active_timeout", ROCESIM_MEMBER(c.active_timeout_ps), 1, kHourPs,
                    "active aging: a flow is exported every this long after its setup (NAK counters reset)"),
      keys::time<S>("inactive_timeout", ROCESIM_MEMBER(c.inactive_timeout_ps), 1, kHourPs,
                    "inactive aging: a flow idle this long is exported and deleted (its entry freed)"),
      keys::time<S>("scan_interval", ROCESIM_MEMBER(c.scan_interval_ps), 1000, kHourPs,
                    "the aging sweep's period (a sweep at every multiple of it)"),
      keys::integer<S>("export_rps", ROCESIM_MEMBER(c.export_rps), 0, int64_t(kMaxRatePerS),
                       "exported records per second per switch; beyond it records are dropped and counted "
                       "(`records_dropped`); `0`: unlimited"),
      keys::integer<S>("export_burst", ROCESIM_MEMBER(c.export_burst), 1, 1000000,
                       "depth of the export rate's token bucket, records"),
      keys::time<S>("throughput_interval", ROCESIM_MEMBER(c.throughput_interval_ps), 1000, kHourPs,
                    "throughput is measured over intervals of this length"),
      keys::size<S>("large_flow_bytes", ROCESIM_MEMBER(c.large_flow_bytes), 0, 1ull << 50,
                    "minimum flow size: a direction gets throughput once its payload reached this"),
      keys::time<S>("enable_at", ROCESIM_MEMBER(enable_at_ps), 0, kHourPs,
                    "analytics starts at this time; before it nothing is mirrored, so flows set up earlier are "
                    "not tracked (their packets are counted as untracked)"),
  };
  return t;
}

const KeyTable<SwitchSpec>& switch_keys() {
  using S = SwitchSpec;
  static const S d{};
  static const KeyTable<S> t = [] {
    Key<S> ecn{"ecn", "map", "the ECN marker: the keys `ecn.*` below",
               [](const CfgNode& n, const std::string& k, S& s) {
                 const CfgNode e = n.map(k);
                 read_keys(ecn_keys(), e, s);
                 e.finish();
               },
               ecn_text, "see below"};
    ecn.block = ecn_block;
    return KeyTable<S>{
        keys::time<S>("clock_period", ROCESIM_MEMBER(clock_period_ps), 100, 100000,
                      "core clock period; pipeline delays are cycles of it, applied from the next clock edge"),
        keys::map<S>("pipeline", ROCESIM_SELF, &pipeline_keys,
                     "stage latencies in cycles: the keys `pipeline.*` below", "`" + emit_flow(pipeline_keys(), d) + "`"),
        keys::boolean<S>("cut_through", ROCESIM_MEMBER(cut_through),
                         "forward once the headers are in when the egress is idle, empty and not faster; else "
                         "store-and-forward"),
        keys::map<S>("buffer", ROCESIM_SELF, &buffer_keys, "the packet buffer memory: the keys `buffer.*` below"),
        keys::map<S>("mmu", ROCESIM_SELF, &mmu_keys, "admission: pools and profiles, the keys `mmu.*` below"),
        keys::map<S>("qos", ROCESIM_MEMBER(qos), &qos_keys, "classification maps: the keys `qos.*` below"),
        keys::map<S>("ecmp", ROCESIM_MEMBER(ecmp), &ecmp_keys,
                     "the ECMP hash unit (docs/ecmp.md): the keys `ecmp.*` below"),
        // After `ecmp`: the alias must agree with a given ecmp.seed.
        {"hash_seed", "integer, 0 .. 4294967295",
         "alias of `ecmp.seed`; refused when both are given with different values; never written to "
         "config.resolved.yaml",
         [](const CfgNode& n, const std::string& k, S& s) {
           if (!n.has(k)) return;
           const uint32_t v = static_cast<uint32_t>(n.integer(k, 0, 0, UINT32_MAX));
           if (n.map("ecmp").has("seed") && s.ecmp.c.seed != v)
             n.fail_key(k, "deprecated alias of switch.ecmp.seed, which is given as " + std::to_string(s.ecmp.c.seed) +
                               ": give one (switch.ecmp.seed)");
           s.ecmp.c.seed = v;
         },
         [](const S&) { return std::string(); }, "deprecated", false},
        keys::map<S>("scheduler", ROCESIM_SELF, &scheduler_keys, "egress scheduling: the keys `scheduler.*` below"),
        ecn,
        {"analytics", "map", "RoCEv2 flow analytics (docs/analytics.md): the keys `analytics.*` below",
         [](const CfgNode& n, const std::string& k, S& s) {
           const CfgNode a = n.map(k);
           read_keys(analytics_keys(), a, s.analytics);
           a.finish();
           const AnalyticsSpec& an = s.analytics;
           if (an.c.mode == analytics::Mode::loss && !an.rules.empty())
             a.fail_key("rules", "mode loss installs its own rules (every RoCEv2 frame): user rules need mode "
                                 "performance");
           if (an.enabled && an.c.mode == analytics::Mode::performance && an.rules.empty())
             a.fail_key("rules", "mode performance selects flows by rules: give at least one");
           if (an.rules.size() > an.c.max_rules)
             a.fail_key("rules", std::to_string(an.rules.size()) + " rules, more than max_rules (" +
                                     std::to_string(an.c.max_rules) + ")");
           if (const char* why = analytics::check_config(an.c)) a.fail(why);
         },
         // Written when it differs from the defaults (analytics off): the
         // resolved configuration of a scenario without analytics stays as it was.
         [](const S& s) {
           const std::string v = emit_flow(analytics_keys(), s.analytics);
           return v == emit_flow(analytics_keys(), AnalyticsSpec{}) ? std::string() : v;
         },
         "see below"},
        keys::choice<S>(
            "queue_impl", {"tlm", "rtl", "lockstep"}, [](const S& s) { return s.queue_impl; },
            [](S& s, const std::string& w) { s.queue_impl = w; },
            "the queue manager that decides (docs/queue-manager.md): `tlm`, the C++ model; `rtl`, the Verilated "
            "RTL (rtl/qm) alone; `lockstep`, the C++ model and the RTL driven with every operation and compared "
            "after each, the first difference failing the run (exit 1); `rtl` and `lockstep` only in builds with "
            "Verilator, for switches within the RTL's build parameters (checked at load, exit 2)"),
    };
  }();
  return t;
}

// Rows of the keys that are not nested maps (whose own keys have rows).
template <class S>
std::string leaf_rows(const KeyTable<S>& t, const S& defaults, const std::string& prefix) {
  KeyTable<S> leaves;
  for (const Key<S>& k : t)
    if (k.type != "map" && k.name != "marker") leaves.push_back(k);
  return reference_rows(leaves, defaults, prefix);
}

}  // namespace

SwitchSpec read_switch(const CfgNode& n) {
  SwitchSpec s;
  read_keys(switch_keys(), n, s);
  n.finish();
  return s;
}

std::string switch_key_reference() {
  const SwitchSpec d{};
  std::string o = reference_header() + leaf_rows(switch_keys(), d, "") + leaf_rows(pipeline_keys(), d, "pipeline.") +
                  leaf_rows(buffer_keys(), d, "buffer.") + leaf_rows(pools_keys(), d, "mmu.pools.") +
                  leaf_rows(mmu_keys(), d, "mmu.");
  const std::pair<const char*, const ProfileSpec*> profiles[] = {{"pg_lossless", &d.pg_lossless},
                                                                 {"pg_lossy", &d.pg_lossy},
                                                                 {"queue_lossless", &d.queue_lossless},
                                                                 {"queue_lossy", &d.queue_lossy}};
  for (const auto& [name, p] : profiles)
    o += leaf_rows(p == &d.pg_lossless ? pg_profile_keys() : profile_keys(), *p, std::string("mmu.") + name + ".");
  o += leaf_rows(qos_keys(), d.qos, "qos.") + leaf_rows(scheduler_keys(), d, "scheduler.") +
       leaf_rows(queue_sched_keys(), SwitchSpec::QueueSched{}, "scheduler.queues.Q.") +
       leaf_rows(shaper_keys(), SwitchSpec::Shaper{}, "scheduler.shaper.") +
       leaf_rows(marker_keys(), MarkerSpec{d.ecn, d.cell_bytes}, "ecn.") + leaf_rows(ecn_keys(), d, "ecn.") +
       leaf_rows(ecmp_keys(), d.ecmp, "ecmp.") + leaf_rows(analytics_keys(), d.analytics, "analytics.");
  return o;
}

std::string emit_switch(const SwitchSpec& s) { return emit_keys(switch_keys(), s, "  "); }

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
  c.ecmp = s.ecmp.c;  // the section's; the fabric applies the overrides (switch_ecmp)

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
    sp.queues[q].shaper = {qs.shaper.rate_bps, qs.shaper.rate_bps ? static_cast<uint32_t>(qs.shaper.burst_bytes) : 0u};
  }
  sp.shaper = {s.port_shaper.rate_bps, s.port_shaper.rate_bps ? static_cast<uint32_t>(s.port_shaper.burst_bytes) : 0u};
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

ecmp::Config switch_ecmp(const EcmpSpec& e, const topology::Node& node, uint64_t run_seed) {
  ecmp::Config c = e.c;
  auto apply = [&c](const std::vector<EcmpOverride>& v, const std::string& who) {
    for (const EcmpOverride& o : v) {
      if (o.name != who) continue;
      for (size_t i = 0; i < ecmp_unit_keys().size(); ++i)
        if (o.given & (1u << i)) copy_ecmp_key(i, o.c, c);
    }
  };
  apply(e.tiers, node.role);
  apply(e.switches, node.name);
  if (c.seed == 0) c.seed = static_cast<uint32_t>(core::fnv1a64(node.name) ^ run_seed);
  return c;
}

void check_ecmp_names(const CfgNode& ecmp, const EcmpSpec& e, const topology::Topology& t) {
  for (const EcmpOverride& o : e.tiers) {
    bool found = false;
    for (uint32_t n : t.switches) found = found || t.nodes[n].role == o.name;
    if (!found) ecmp.map("tiers").fail_key(o.name, "no switch of this topology has the role '" + o.name + "'");
  }
  for (const EcmpOverride& o : e.switches) {
    const uint32_t n = t.find(o.name);
    if (n == topology::kNoNode || t.nodes[n].kind != topology::Node::sw)
      ecmp.map("switches").fail_key(o.name, "no switch named '" + o.name + "' in this topology");
  }
}

void check_analytics(const CfgNode& analytics, const AnalyticsSpec& a, const topology::Topology& t, bool direct) {
  if (!a.enabled) return;
  if (direct || t.switches.empty())
    analytics.fail_key("enabled", "analytics runs in switches: the topology has none (topology.kind)");
  uint32_t most = 0;
  for (uint32_t n : t.switches) most = std::max(most, t.nodes[n].ports);
  for (uint32_t p : a.ports)
    if (p >= most)
      analytics.fail_key("ports", "port " + std::to_string(p) + ": no switch of this topology has it (at most " +
                                      std::to_string(most) + " ports)");
}

analytics::Config switch_analytics(const AnalyticsSpec& a, uint32_t domain, uint32_t ports) {
  analytics::Config c = a.c;
  c.domain_id = domain;
  c.ports = ports;
  return c;
}

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

}  // namespace rocesim::sim
