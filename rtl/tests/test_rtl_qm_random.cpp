// Constrained-random comparison of the queue manager RTL (rtl::QmRtl on the
// Verilated rtl/qm/qm.sv) against the C++ model (qm::QueueManager): the same
// operation stream into both, every result field compared, and after each
// operation the reads of the state it touched (and periodically every read);
// the first difference fails the test with the operation's index, the
// operation, the field, the expected (C++) and the actual (RTL) value.
//
// The stream is constrained to reach the corners: fill and drain phases that
// take the buffer near full (drops of every reason), lossless PGs going into
// headroom and XOFF/XON churn with refresh ticks, lossy packets on lossless
// PGs, every pool (ingress lossy and lossless, egress dynamic and static),
// every ECN mode at both points in both units, WRED words from a seeded RNG,
// and malformed operations (dequeues of empty queues) that must throw alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "qm/queue_manager.h"
#include "qm_rtl.h"

namespace rocesim {
namespace {

using mmu::PoolType;
using mmu::ThresholdMode;
using rtl::QmRtl;

constexpr uint32_t kCell = 256;
constexpr uint16_t kPorts = 4;

mmu::PoolConfig pool(const char* name, PoolType t, uint32_t size, ThresholdMode m) {
  mmu::PoolConfig p;
  p.name = name;
  p.type = t;
  p.size_cells = size;
  p.mode = m;
  return p;
}

// One scenario of the random test: a configuration family (variant) and a seed.
struct Scenario {
  int variant;     // 0: per-PG headroom, dynamic XOFF, offset XON; 1: shared headroom, static XOFF, ratio XON;
                   // 2: per-PG headroom, dynamic XOFF, absolute XON, static ingress lossless pool
  uint64_t seed;
  uint32_t ops;
};

qm::Config make_config(const Scenario& sc, std::mt19937_64& rng) {
  auto pick = [&](uint32_t lo, uint32_t hi) { return lo + uint32_t(rng() % (hi - lo + 1)); };
  qm::Config c;
  mmu::Config& m = c.mmu;
  m.cell_bytes = kCell;
  m.total_cells = 1024;  // until the profiles are known
  // ingress: lossy (dynamic), lossless (dynamic, or static in variant 2); egress: dynamic, static
  m.pools = {pool("ing_lossy", PoolType::ingress, 420, ThresholdMode::dynamic_th),
             pool("ing_lossless", PoolType::ingress, 260,
                  sc.variant == 2 ? ThresholdMode::static_th : ThresholdMode::dynamic_th),
             pool("eg_dynamic", PoolType::egress, 600, ThresholdMode::dynamic_th),
             pool("eg_static", PoolType::egress, 500, ThresholdMode::static_th)};
  m.shared_headroom_cells = sc.variant == 1 ? 60 : 0;
  m.ports.resize(kPorts);
  for (mmu::PortConfig& p : m.ports) {
    for (unsigned g = 0; g < 8; ++g) {
      mmu::PgProfile& pg = p.pgs[g];
      pg.lossless = g == 3 || g == 4;
      pg.pool = pg.lossless ? 1 : 0;
      pg.reserved_cells = pick(0, 3);
      pg.headroom_cells = pg.lossless ? pick(8, 24) : 0;
      const uint32_t how = pick(0, 3);
      if (how == 0) {
        pg.threshold = {ThresholdMode::static_th, 0, pick(10, 80)};
      } else if (how == 1) {
        pg.threshold = {ThresholdMode::dynamic_th, int(pick(0, 6)) - 3, 0};
      } else {
        pg.threshold = {ThresholdMode::from_pool, int(pick(0, 4)) - 2, pick(20, 90)};
      }
    }
    for (unsigned q = 0; q < 8; ++q) {
      mmu::QueueProfile& qp = p.queues[q];
      qp.pool = q < 4 ? 2 : 3;
      qp.reserved_cells = pick(0, 3);
      qp.threshold = {ThresholdMode::from_pool, int(pick(0, 6)) - 3, pick(20, 150)};
    }
  }
  using Mode = ecn::MarkerConfig::Mode;
  using Point = ecn::MarkerConfig::Point;
  using Unit = ecn::MarkerConfig::Unit;
  for (unsigned q = 0; q < 8; ++q) {
    ecn::MarkerConfig& e = c.ecn[q];
    e.mode = static_cast<Mode>(q % 4);
    e.point = (q / 4 + sc.variant) % 2 ? Point::dequeue : Point::enqueue;
    e.unit = (q + sc.variant) % 3 == 0 ? Unit::bytes : Unit::cells;
    const uint64_t u = e.unit == Unit::bytes ? kCell : 1;
    e.k = pick(2, 30) * u;
    e.kmin = pick(0, 20) * u;
    e.kmax = e.kmin + pick(1, 40) * u;
    const double pmaxes[] = {1.0, 0.5, 0.2, 0.01};
    e.pmax = pmaxes[pick(0, 3)];
    e.k_low = pick(1, 15) * u;
    e.k_high = e.k_low + pick(0, 20) * u;
  }
  // The buffer is the ingress view plus 4 cells (mmu::validate's bound), so
  // admitted packets can take it to within a few cells of full.
  const mmu::ReservedTotals rt = mmu::reserved_totals(m);
  m.total_cells = uint32_t(m.pools[0].size_cells + m.pools[1].size_cells + rt.ingress + rt.headroom + 4);
  c.pfc_enabled = true;
  c.pfc_pgs = (1u << 3) | (1u << 4);
  c.pfc.dynamic_xoff = sc.variant != 1;
  c.pfc.xoff_cells = 24;
  c.pfc.xon_rule = sc.variant == 0   ? pfc::GeneratorConfig::XonRule::offset
                   : sc.variant == 1 ? pfc::GeneratorConfig::XonRule::ratio
                                     : pfc::GeneratorConfig::XonRule::absolute;
  c.pfc.xon_offset_cells = 4;
  c.pfc.xon_cells = 6;
  c.pfc.xon_ratio_q16 = pfc::xon_ratio_fixed(0.5);
  return c;
}

std::string str(const qm::EnqueueOp& o) {
  std::ostringstream s;
  s << "enqueue{in " << o.in_port << "/" << unsigned(o.pg) << " out " << o.out_port << "/" << unsigned(o.queue)
    << " cells " << o.cells << " bytes " << o.bytes << " lossless " << o.lossless << " ecn_frame " << o.ecn_frame
    << " ecn " << unsigned(o.ecn) << " rand32 " << o.rand32 << "}";
  return s.str();
}
std::string str(const qm::DequeueOp& o) {
  std::ostringstream s;
  s << "dequeue{port " << o.port << " queue " << unsigned(o.queue) << " ecn_frame " << o.ecn_frame << " ecn "
    << unsigned(o.ecn) << " rand32 " << o.rand32 << " discard " << o.discard << "}";
  return s.str();
}

// Collects the first difference.
class Diff {
 public:
  template <typename A, typename B>
  void eq(const char* field, const A& expected, const B& actual) {
    if (!m_msg.empty() || uint64_t(expected) == uint64_t(actual)) return;
    std::ostringstream s;
    s << field << ": expected (C++) " << uint64_t(expected) << ", actual (RTL) " << uint64_t(actual);
    m_msg = s.str();
  }
  bool any() const { return !m_msg.empty(); }
  const std::string& msg() const { return m_msg; }

 private:
  std::string m_msg;
};

void compare(Diff& d, const mmu::Charge& e, const mmu::Charge& a) {
  d.eq("charge.in_port", e.in_port, a.in_port);
  d.eq("charge.pg", e.pg, a.pg);
  d.eq("charge.out_port", e.out_port, a.out_port);
  d.eq("charge.queue", e.queue, a.queue);
  d.eq("charge.in_pool", e.in_pool, a.in_pool);
  d.eq("charge.eg_pool", e.eg_pool, a.eg_pool);
  d.eq("charge.in_reserved", e.in_reserved, a.in_reserved);
  d.eq("charge.in_shared", e.in_shared, a.in_shared);
  d.eq("charge.headroom", e.headroom, a.headroom);
  d.eq("charge.eg_reserved", e.eg_reserved, a.eg_reserved);
  d.eq("charge.eg_shared", e.eg_shared, a.eg_shared);
}
void compare(Diff& d, const mmu::PgState& e, const mmu::PgState& a, const char* what) {
  const std::string w(what);
  d.eq((w + ".reserved").c_str(), e.reserved, a.reserved);
  d.eq((w + ".shared").c_str(), e.shared, a.shared);
  d.eq((w + ".headroom").c_str(), e.headroom, a.headroom);
  d.eq((w + ".threshold").c_str(), e.threshold, a.threshold);
}
void compare(Diff& d, const qm::EcnResult& e, const qm::EcnResult& a) {
  d.eq("ecn.decided", e.decided, a.decided);
  d.eq("ecn.fired", e.fired, a.fired);
  d.eq("ecn.mark", e.mark, a.mark);
  d.eq("ecn.drew", e.drew, a.drew);
}

// Reads of one (port, index): queue and PG.
void compare_reads(Diff& d, const qm::QueueManagerIf& e, const qm::QueueManagerIf& a, uint16_t port, uint8_t i) {
  const std::string at = " [" + std::to_string(port) + "/" + std::to_string(i) + "]";
  d.eq(("head_cell" + at).c_str(), e.head_cell(port, i), a.head_cell(port, i));
  d.eq(("queue_packets" + at).c_str(), e.queue_packets(port, i), a.queue_packets(port, i));
  d.eq(("queue_bytes" + at).c_str(), e.queue_bytes(port, i), a.queue_bytes(port, i));
  d.eq(("xoff" + at).c_str(), e.xoff(port, i), a.xoff(port, i));
  compare(d, e.pg_state(port, i), a.pg_state(port, i), ("pg_state" + at).c_str());
  const mmu::QueueState qe = e.queue_state(port, i), qa = a.queue_state(port, i);
  d.eq(("queue_state.reserved" + at).c_str(), qe.reserved, qa.reserved);
  d.eq(("queue_state.shared" + at).c_str(), qe.shared, qa.shared);
  d.eq(("queue_state.threshold" + at).c_str(), qe.threshold, qa.threshold);
}

void compare_all(Diff& d, const qm::QueueManagerIf& e, const qm::QueueManagerIf& a, uint32_t cells, bool chains) {
  d.eq("free_cells", e.free_cells(), a.free_cells());
  for (uint16_t p = 0; p < kPorts && !d.any(); ++p) {
    for (uint8_t i = 0; i < 8; ++i) compare_reads(d, e, a, p, i);
  }
  if (chains) {
    for (uint32_t c = 0; c < cells && !d.any(); ++c) {
      d.eq(("next_cell [" + std::to_string(c) + "]").c_str(), e.next_cell(c), a.next_cell(c));
    }
  }
}

struct Stats {
  uint64_t ops = 0, enq = 0, deq = 0, ticks = 0, errors = 0;
  uint64_t verdicts[mmu::kVerdicts] = {};
  uint64_t xoff = 0, xon = 0, headroom = 0, drew = 0, marks = 0, lossless = 0;
  uint32_t min_free = UINT32_MAX;
};

void run(const Scenario& sc, Stats& st) {
  std::mt19937_64 rng(sc.seed);
  const qm::Config cfg = make_config(sc, rng);
  qm::QueueManager model(cfg);
  QmRtl rtl(cfg);
  const uint32_t cells = cfg.mmu.total_cells;
  auto pick = [&](uint32_t lo, uint32_t hi) { return lo + uint32_t(rng() % (hi - lo + 1)); };
  auto chance = [&](unsigned pct) { return rng() % 100 < pct; };

  bool filling = true;
  for (uint32_t n = 0; n < sc.ops; ++n) {
    // Phases: fill until the buffer is nearly full (or a while), then drain nearly empty.
    const uint32_t free_now = model.free_cells();
    st.min_free = std::min(st.min_free, free_now);
    if (filling && (free_now < 40 || n % 3000 == 2999)) filling = false;
    if (!filling && free_now > cells - 60) filling = true;
    const unsigned enq_pct = filling ? 75 : 25;

    Diff d;
    std::string op_text;
    const unsigned r = pick(0, 99);
    if (r < 6) {
      // refresh tick, mostly on the lossless PGs
      const uint16_t port = uint16_t(pick(0, kPorts - 1));
      const uint8_t pg = uint8_t(chance(80) ? pick(3, 4) : pick(0, 7));
      op_text = "pfc_tick{port " + std::to_string(port) + " pg " + std::to_string(pg) + "}";
      const qm::PfcAction e = model.pfc_tick(port, pg);
      const qm::PfcAction a = rtl.pfc_tick(port, pg);
      d.eq("pfc", uint8_t(e), uint8_t(a));
      st.xon += e == qm::PfcAction::xon;
      ++st.ticks;
      if (!d.any()) compare_reads(d, model, rtl, port, pg);
    } else if (r < 6 + enq_pct * 94 / 100) {
      qm::EnqueueOp op;
      op.in_port = uint16_t(pick(0, kPorts - 1));
      op.pg = uint8_t(chance(45) ? pick(3, 4) : pick(0, 7));
      op.out_port = uint16_t(pick(0, kPorts - 1));
      op.queue = uint8_t(pick(0, 7));
      op.cells = chance(92) ? pick(1, 8) : pick(9, 36);
      op.bytes = (op.cells - 1) * kCell + pick(1, kCell);
      const bool lossless_pg = op.pg == 3 || op.pg == 4;
      op.lossless = lossless_pg ? chance(90) : chance(10);
      // a paused sender mostly stops (what is still sent is the data in flight)
      if (op.lossless && model.xoff(op.in_port, op.pg) && chance(85)) {
        op.pg = uint8_t(pick(0, 2));
        op.lossless = false;
      }
      op.ecn_frame = chance(85);
      op.ecn = uint8_t(pick(0, 3));
      op.rand32 = uint32_t(rng() >> 32);
      op_text = str(op);
      const qm::EnqueueResult e = model.enqueue(op);
      const qm::EnqueueResult a = rtl.enqueue(op);
      d.eq("verdict", uint8_t(e.verdict), uint8_t(a.verdict));
      d.eq("lossless", e.lossless, a.lossless);
      d.eq("in_headroom", e.in_headroom, a.in_headroom);
      d.eq("head_cell", e.head_cell, a.head_cell);
      compare(d, e.charge, a.charge);
      compare(d, e.pg, a.pg, "pg");
      d.eq("pfc", uint8_t(e.pfc), uint8_t(a.pfc));
      compare(d, e.ecn, a.ecn);
      ++st.enq;
      ++st.verdicts[size_t(e.verdict)];
      st.xoff += e.pfc == qm::PfcAction::xoff;
      st.headroom += e.in_headroom;
      st.lossless += e.lossless;
      st.drew += e.ecn.drew;
      st.marks += e.ecn.mark;
      if (!d.any()) {
        compare_reads(d, model, rtl, op.out_port, op.queue);
        compare_reads(d, model, rtl, op.in_port, op.pg);
      }
      if (!d.any() && e.admitted()) {
        for (uint32_t c = e.head_cell, k = 0; k < op.cells && !d.any(); ++k) {
          const uint32_t ne = model.next_cell(c);
          d.eq(("next_cell [" + std::to_string(c) + "]").c_str(), ne, rtl.next_cell(c));
          c = ne;
        }
      }
    } else {
      qm::DequeueOp op;
      op.port = uint16_t(pick(0, kPorts - 1));
      op.queue = uint8_t(pick(0, 7));
      // mostly a queue that holds packets (searched from a random start)
      if (!chance(3)) {
        for (unsigned k = 0; k < kPorts * 8u && model.queue_packets(op.port, op.queue) == 0; ++k) {
          const unsigned idx = (op.port * 8u + op.queue + 1) % (kPorts * 8u);
          op.port = uint16_t(idx / 8);
          op.queue = uint8_t(idx % 8);
        }
      }
      op.ecn_frame = chance(85);
      op.ecn = uint8_t(pick(0, 3));
      op.rand32 = uint32_t(rng() >> 32);
      op.discard = chance(5);
      op_text = str(op);
      bool e_threw = false, a_threw = false;
      qm::DequeueResult e, a;
      try {
        e = model.dequeue(op);
      } catch (const std::logic_error&) {
        e_threw = true;
      }
      try {
        a = rtl.dequeue(op);
      } catch (const std::logic_error&) {
        a_threw = true;
      }
      d.eq("threw logic_error", e_threw, a_threw);
      if (!e_threw && !a_threw) {
        d.eq("head_cell", e.head_cell, a.head_cell);
        d.eq("cells", e.cells, a.cells);
        d.eq("bytes", e.bytes, a.bytes);
        compare(d, e.charge, a.charge);
        compare(d, e.pg, a.pg, "pg");
        d.eq("pfc", uint8_t(e.pfc), uint8_t(a.pfc));
        compare(d, e.ecn, a.ecn);
        st.xoff += e.pfc == qm::PfcAction::xoff;  // a release can find the threshold fallen
        st.xon += e.pfc == qm::PfcAction::xon;
        st.drew += e.ecn.drew;
        st.marks += e.ecn.mark;
        if (!d.any()) compare_reads(d, model, rtl, e.charge.in_port, e.charge.pg);
      }
      st.errors += e_threw;
      ++st.deq;
      if (!d.any()) compare_reads(d, model, rtl, op.port, op.queue);
    }
    if (!d.any()) d.eq("free_cells", model.free_cells(), rtl.free_cells());
    // every read every 64 operations, every chain every 4096 and at the end
    if (!d.any() && n % 64 == 63) compare_all(d, model, rtl, cells, n % 4096 == 4095 || n + 1 == sc.ops);
    ++st.ops;
    if (d.any()) {
      FAIL() << "variant " << sc.variant << " seed " << sc.seed << ": first difference at operation " << n << " "
             << op_text << ": " << d.msg();
    }
  }
}

TEST(RtlQmRandom, MatchesTheCppModel) {
  // ROCESIM_RTL_RANDOM_OPS scales the run (default 3 x 100 000 operations).
  uint32_t per = 100000;
  if (const char* env = std::getenv("ROCESIM_RTL_RANDOM_OPS")) per = uint32_t(std::strtoul(env, nullptr, 10)) / 3;
  const Scenario scenarios[] = {{0, 11, per}, {1, 22, per}, {2, 33, per}};
  Stats st;
  for (const Scenario& sc : scenarios) {
    run(sc, st);
    if (HasFatalFailure() || HasFailure()) return;
  }
  std::printf("operations %llu: enqueue %llu (admit %llu, ingress_limit %llu, egress_limit %llu, pool_full %llu, "
              "headroom_overflow %llu; lossless %llu, into headroom %llu), dequeue %llu (%llu of an empty queue), "
              "pfc_tick %llu; xoff %llu, xon %llu; WRED draws %llu, marks %llu; fewest free cells %u\n",
              (unsigned long long)st.ops, (unsigned long long)st.enq, (unsigned long long)st.verdicts[0],
              (unsigned long long)st.verdicts[1], (unsigned long long)st.verdicts[2],
              (unsigned long long)st.verdicts[3], (unsigned long long)st.verdicts[4], (unsigned long long)st.lossless,
              (unsigned long long)st.headroom, (unsigned long long)st.deq, (unsigned long long)st.errors,
              (unsigned long long)st.ticks, (unsigned long long)st.xoff, (unsigned long long)st.xon,
              (unsigned long long)st.drew, (unsigned long long)st.marks, st.min_free);
  EXPECT_GE(st.ops, 3u * per);
  // the stream reached the corners it is meant to reach
  for (size_t v = 0; v < mmu::kVerdicts; ++v) EXPECT_GT(st.verdicts[v], 0u) << mmu::verdict_name(mmu::Verdict(v));
  EXPECT_GT(st.xoff, 100u);
  EXPECT_GT(st.xon, 100u);
  EXPECT_GT(st.headroom, 100u);
  EXPECT_GT(st.drew, 100u);
  EXPECT_GT(st.errors, 0u);
  EXPECT_LT(st.min_free, 40u);
}

}  // namespace
}  // namespace rocesim
