// Directed tests of the queue manager RTL (rtl/qm/qm.sv) through its
// Verilated model and the driver rtl::QmRtl. Every expected value is
// computed here from the rule it checks (tlm/mmu/mmu.h, tlm/pfc/pfc.h,
// tlm/ecn/marker.h, tlm/qm/queue_manager.h), not taken from a model run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include <unistd.h>

#include "Vqm.h"
#include "qm_rtl.h"
#include "verilated.h"

namespace rocesim {
namespace {

using mmu::PoolType;
using mmu::ThresholdMode;
using mmu::Verdict;
using qm::PfcAction;
using rtl::QmRtl;

constexpr uint32_t kCell = 256;

mmu::PoolConfig pool(const char* name, PoolType t, uint32_t size, ThresholdMode m = ThresholdMode::dynamic_th) {
  mmu::PoolConfig p;
  p.name = name;
  p.type = t;
  p.size_cells = size;
  p.mode = m;
  return p;
}

// Pool 0: ingress (dynamic, alpha 1 unless a test sets dynamic_th), pool 1:
// egress. Every queue has a static threshold of the egress pool's size, so
// only the pool can refuse at egress unless a test says otherwise.
qm::Config base(uint32_t total_cells, size_t ports, uint32_t ing_size, uint32_t eg_size) {
  qm::Config c;
  c.mmu.cell_bytes = kCell;
  c.mmu.total_cells = total_cells;
  c.mmu.pools = {pool("ingress", PoolType::ingress, ing_size), pool("egress", PoolType::egress, eg_size)};
  c.mmu.ports.resize(ports);
  for (mmu::PortConfig& p : c.mmu.ports) {
    for (mmu::PgProfile& g : p.pgs) g.pool = 0;
    for (mmu::QueueProfile& q : p.queues) {
      q.pool = 1;
      q.threshold.mode = ThresholdMode::static_th;
      q.threshold.static_cells = eg_size;
    }
  }
  return c;
}

qm::EnqueueOp enq(uint16_t in_port, uint8_t pg, uint16_t out_port, uint8_t queue, uint32_t cells,
                  bool lossless = false) {
  qm::EnqueueOp op;
  op.in_port = in_port;
  op.pg = pg;
  op.out_port = out_port;
  op.queue = queue;
  op.cells = cells;
  op.bytes = cells * kCell;
  op.lossless = lossless;
  return op;
}

qm::DequeueOp deq(uint16_t port, uint8_t queue) {
  qm::DequeueOp op;
  op.port = port;
  op.queue = queue;
  return op;
}

// alpha * free with alpha = 2^n as a shift (mmu.h), free saturating at 0.
uint64_t dt(uint32_t size, uint32_t used, int n) {
  const uint64_t free_cells = used < size ? size - used : 0;
  return n >= 0 ? free_cells << n : free_cells >> -n;
}

// --- admission --------------------------------------------------------------

// A lossy PG with a reserve and a dynamic threshold alpha = 2: reserve first,
// then shared while s < 2 * (pool - used) *before* the packet, then
// ingress_limit; the PG's threshold as it moves; nothing charged on a drop.
// Pool 129: the last offer finds s == T (86 == 2 * 43), which must drop.
TEST(RtlQm, DynamicThresholdAdmissionAndDropReason) {
  qm::Config c = base(512, 2, 129, 400);
  mmu::PgProfile& g = c.mmu.ports[0].pgs[0];
  g.reserved_cells = 4;
  g.threshold.mode = ThresholdMode::dynamic_th;
  g.threshold.dynamic_th = 1;
  QmRtl q(c);

  uint32_t reserved = 0, shared = 0, admitted = 0;
  for (int i = 0; i < 200; ++i) {
    const qm::EnqueueResult r = q.enqueue(enq(0, 0, 1, 2, 1));
    const uint64_t t_before = dt(129, shared, 1);
    if (reserved < 4) {
      ASSERT_EQ(r.verdict, Verdict::admit) << i;
      EXPECT_EQ(r.charge.in_reserved, 1u);
      EXPECT_EQ(r.charge.in_shared, 0u);
      ++reserved;
    } else if (shared < t_before) {
      ASSERT_EQ(r.verdict, Verdict::admit) << i;
      EXPECT_EQ(r.charge.in_reserved, 0u);
      EXPECT_EQ(r.charge.in_shared, 1u);
      ++shared;
    } else {
      ASSERT_EQ(r.verdict, Verdict::drop_ingress_limit) << i << " shared " << shared << " T " << t_before;
      EXPECT_EQ(r.head_cell, qm::kNoCell);
      EXPECT_EQ(r.charge.cells(), 0u);
      EXPECT_EQ(r.charge.eg_reserved + r.charge.eg_shared, 0u);
      EXPECT_EQ(r.pfc, PfcAction::none);
      EXPECT_FALSE(r.ecn.decided);
      EXPECT_EQ(q.last_cycles(), 1u);
      break;
    }
    ++admitted;
    EXPECT_EQ(r.head_cell, admitted - 1);  // fresh free list: cells in order
    EXPECT_EQ(r.charge.eg_shared, 1u);     // no queue reserve
    EXPECT_EQ(r.pg.reserved, reserved);
    EXPECT_EQ(r.pg.shared, shared);
    EXPECT_EQ(r.pg.threshold, dt(129, shared, 1));
    EXPECT_EQ(q.last_cycles(), 2u);  // 1 + cells
  }
  // admitted while 3s < 258: s stops at 86, where s == T
  EXPECT_EQ(shared, 86u);
  EXPECT_EQ(q.pg_state(0, 0).threshold, 86u);
  EXPECT_EQ(q.pg_state(0, 0).shared, 86u);
  EXPECT_EQ(q.pool_used(0), 86u);
  EXPECT_EQ(q.free_cells(), 512u - admitted);
  EXPECT_EQ(q.queue_packets(1, 2), admitted);
  EXPECT_EQ(q.queue_bytes(1, 2), uint64_t(admitted) * kCell);
}

// alpha = 2^-2: the threshold is floor(free / 4), read back through pg_state
// for every pool level a second PG creates; a PG with a static threshold
// admits while s + part <= S; pool_full beats the threshold.
TEST(RtlQm, NegativeShiftStaticThresholdAndPoolFull) {
  qm::Config c = base(512, 2, 100, 400);
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::dynamic_th, -2, 0};
  c.mmu.ports[0].pgs[1].threshold = {ThresholdMode::static_th, 0, 90};
  c.mmu.ports[1].pgs[0].threshold = {ThresholdMode::static_th, 0, 1000};  // only the pool limits it
  QmRtl q(c);

  // PG (0,1), static 90, packets of 7 cells: admitted while s + 7 <= 90.
  uint32_t s1 = 0;
  for (int i = 0; i < 20; ++i) {
    const qm::EnqueueResult r = q.enqueue(enq(0, 1, 1, 0, 7));
    if (s1 + 7 <= 90) {
      ASSERT_EQ(r.verdict, Verdict::admit) << i;
      s1 += 7;
      EXPECT_EQ(r.pg.threshold, 90u);
      // the other PG's dynamic threshold is floor((100 - used) / 4)
      EXPECT_EQ(q.pg_state(0, 0).threshold, (100u - s1) / 4) << s1;
      EXPECT_EQ(q.last_cycles(), 8u);
    } else {
      ASSERT_EQ(r.verdict, Verdict::drop_ingress_limit) << i;
      break;
    }
  }
  EXPECT_EQ(s1, 84u);
  // 16 cells left in the pool; PG (1,0) asks for 17: pool_full although its
  // static threshold (1000) would admit.
  EXPECT_EQ(q.enqueue(enq(1, 0, 0, 0, 17)).verdict, Verdict::drop_pool_full);
  EXPECT_EQ(q.enqueue(enq(1, 0, 0, 0, 16)).verdict, Verdict::admit);
  EXPECT_EQ(q.pool_used(0), 100u);
  EXPECT_EQ(q.pg_state(0, 0).threshold, 0u);
  // PG (0,0) with s = 0 and threshold 0: 0 < 0 fails, and pool_full comes
  // first for any shared part (used + 1 > 100).
  EXPECT_EQ(q.enqueue(enq(0, 0, 1, 1, 1)).verdict, Verdict::drop_pool_full);
}

// Egress: a queue with a reserve and a static threshold; lossy packets get
// egress_limit once q_shared + part would exceed it; the ingress side had
// room, and nothing is charged on the drop.
TEST(RtlQm, EgressLimit) {
  qm::Config c = base(512, 2, 200, 200);
  c.mmu.ports[1].queues[5].reserved_cells = 3;
  c.mmu.ports[1].queues[5].threshold = {ThresholdMode::static_th, 0, 10};
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 150};
  QmRtl q(c);
  uint32_t qr = 0, qs = 0;
  for (int i = 0; i < 10; ++i) {
    const qm::EnqueueResult r = q.enqueue(enq(0, 0, 1, 5, 2));
    const uint32_t er = std::min(2u, 3u - qr), es = 2 - er;
    if (es == 0 || qs + es <= 10) {
      ASSERT_EQ(r.verdict, Verdict::admit) << i;
      EXPECT_EQ(r.charge.eg_reserved, er);
      EXPECT_EQ(r.charge.eg_shared, es);
      qr += er;
      qs += es;
    } else {
      ASSERT_EQ(r.verdict, Verdict::drop_egress_limit) << i;
      EXPECT_EQ(r.charge.cells(), 0u);
      break;
    }
    const mmu::QueueState st = q.queue_state(1, 5);
    EXPECT_EQ(st.reserved, qr);
    EXPECT_EQ(st.shared, qs);
    EXPECT_EQ(st.threshold, 10u);
  }
  EXPECT_EQ(qr, 3u);
  EXPECT_EQ(qs, 9u);  // 3 + 9 = 12 cells: 6 packets, the 7th (shared 9 + 2 > 10) dropped
  EXPECT_EQ(q.pool_used(1), 9u);
}

// Egress with a dynamic threshold (alpha 1 on a 200-cell egress pool):
// lossy 1-cell packets are admitted while q_shared < 200 - used before the
// packet, so the queue stops at 100, where q_shared == T; the next packet
// gets egress_limit. A second queue of the pool sees the threshold fall.
TEST(RtlQm, EgressDynamicThreshold) {
  qm::Config c = base(512, 2, 400, 200);
  c.mmu.pools[1].mode = ThresholdMode::dynamic_th;
  c.mmu.ports[1].queues[6].threshold = {ThresholdMode::from_pool, 0, 0};
  c.mmu.ports[1].queues[7].threshold = {ThresholdMode::dynamic_th, 1, 0};
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 400};
  QmRtl q(c);
  uint32_t s = 0;
  for (int i = 0; i < 150; ++i) {
    const qm::EnqueueResult r = q.enqueue(enq(0, 0, 1, 6, 1));
    if (s < dt(200, s, 0)) {
      ASSERT_EQ(r.verdict, Verdict::admit) << i;
      ++s;
    } else {
      ASSERT_EQ(r.verdict, Verdict::drop_egress_limit) << i;
      break;
    }
    EXPECT_EQ(q.queue_state(1, 6).threshold, dt(200, s, 0));
    EXPECT_EQ(q.queue_state(1, 7).threshold, dt(200, s, 1));
  }
  EXPECT_EQ(s, 100u);
  EXPECT_EQ(q.queue_state(1, 6).threshold, 100u);
}

// --- lossless -----------------------------------------------------------------

// A lossless PG: reserve 2, static shared limit 6, headroom 10. Packets go to
// reserve, then shared while s + 1 <= 6, then all to headroom (in_headroom),
// then headroom_overflow; the egress side never drops them although the
// queue's static threshold is 1. Releases return headroom, then shared, then
// reserve (counter order), whichever packet leaves, and the dequeue reports
// those buckets.
TEST(RtlQm, LosslessIntoHeadroomAndReleaseOrder) {
  qm::Config c = base(512, 2, 200, 200);
  mmu::PgProfile& g = c.mmu.ports[0].pgs[3];
  g.lossless = true;
  g.reserved_cells = 2;
  g.headroom_cells = 10;
  g.threshold = {ThresholdMode::static_th, 0, 6};
  c.mmu.ports[1].queues[3].threshold = {ThresholdMode::static_th, 0, 1};
  QmRtl q(c);

  uint32_t r = 0, s = 0, h = 0;
  std::vector<mmu::Charge> charged;
  for (int i = 0; i < 30; ++i) {
    const qm::EnqueueResult e = q.enqueue(enq(0, 3, 1, 3, 1, true));
    EXPECT_TRUE(e.lossless);
    if (r < 2) {
      ++r;
      EXPECT_EQ(e.charge.in_reserved, 1u);
    } else if (s + 1 <= 6) {
      ++s;
      EXPECT_EQ(e.charge.in_shared, 1u);
      EXPECT_FALSE(e.in_headroom);
    } else if (h + 1 <= 10) {
      ++h;
      EXPECT_EQ(e.charge.headroom, 1u);
      EXPECT_TRUE(e.in_headroom);
    } else {
      EXPECT_EQ(e.verdict, Verdict::drop_headroom_overflow) << i;
      EXPECT_FALSE(e.in_headroom);
      break;
    }
    ASSERT_EQ(e.verdict, Verdict::admit) << i;
    charged.push_back(e.charge);
    EXPECT_EQ(e.pg.reserved, r);
    EXPECT_EQ(e.pg.shared, s);
    EXPECT_EQ(e.pg.headroom, h);
  }
  EXPECT_EQ(charged.size(), 18u);
  // egress: accounting only (shared far above the static 1)
  EXPECT_EQ(q.queue_state(1, 3).shared, 18u);
  EXPECT_EQ(q.pool_used(1), 18u);
  // Release order: headroom first, then shared, then reserve (queue: shared,
  // then reserve), whichever packet leaves; the dequeue's charge is what came
  // back from each bucket, so the first packets out (charged to the reserve)
  // return headroom.
  uint32_t qs = 18, qr = 0;  // the queue has no reserve: all 18 cells shared
  for (size_t i = 0; i < charged.size(); ++i) {
    const qm::DequeueResult d = q.dequeue(deq(1, 3));
    const uint32_t want_h = h > 0, want_s = !want_h && s > 0, want_r = !want_h && !want_s;
    EXPECT_EQ(d.charge.headroom, want_h) << i;
    EXPECT_EQ(d.charge.in_shared, want_s) << i;
    EXPECT_EQ(d.charge.in_reserved, want_r) << i;
    EXPECT_EQ(d.charge.eg_shared, 1u) << i;
    EXPECT_EQ(d.charge.eg_reserved, 0u) << i;
    EXPECT_EQ(d.charge.in_port, 0u);
    EXPECT_EQ(d.charge.pg, 3u);
    EXPECT_EQ(d.charge.out_port, 1u);
    EXPECT_EQ(d.charge.queue, 3u);
    EXPECT_EQ(d.charge.in_pool, 0u);
    EXPECT_EQ(d.charge.eg_pool, 1u);
    h -= want_h;
    s -= want_s;
    r -= want_r;
    --qs;
    EXPECT_EQ(d.pg.reserved, r) << i;
    EXPECT_EQ(d.pg.shared, s) << i;
    EXPECT_EQ(d.pg.headroom, h) << i;
    EXPECT_EQ(q.queue_state(1, 3).shared, qs);
    EXPECT_EQ(q.queue_state(1, 3).reserved, qr);
    EXPECT_EQ(q.last_cycles(), 2u);
  }
  // the admits charged the first two to the reserve, the last ten to headroom
  EXPECT_EQ(charged.front().in_reserved, 1u);
  EXPECT_EQ(charged.back().headroom, 1u);
  EXPECT_EQ(q.free_cells(), 512u);
  EXPECT_EQ(q.pool_used(0) + q.pool_used(1), 0u);
}

// Shared headroom pool of 5 cells: each lossless PG may use up to its
// headroom_cells (8) in it, together at most 5.
TEST(RtlQm, SharedHeadroomPool) {
  qm::Config c = base(512, 2, 200, 200);
  c.mmu.shared_headroom_cells = 5;
  for (uint8_t pg : {3, 4}) {
    mmu::PgProfile& g = c.mmu.ports[0].pgs[pg];
    g.lossless = true;
    g.headroom_cells = 8;
    g.threshold = {ThresholdMode::static_th, 0, 0};  // every cell beyond the (zero) reserve to headroom
  }
  QmRtl q(c);
  uint32_t used = 0;
  for (int i = 0; i < 8; ++i) {
    const uint8_t pg = i % 2 ? 4 : 3;
    const qm::EnqueueResult e = q.enqueue(enq(0, pg, 1, 0, 1, true));
    if (used + 1 <= 5) {
      ASSERT_EQ(e.verdict, Verdict::admit) << i;
      EXPECT_TRUE(e.in_headroom);
      ++used;
    } else {
      EXPECT_EQ(e.verdict, Verdict::drop_headroom_overflow) << i;
    }
    EXPECT_EQ(q.headroom_pool_used(), used);
  }
  EXPECT_EQ(q.pg_state(0, 3).headroom + q.pg_state(0, 4).headroom, 5u);
  // A packet of 2 cells handled as lossy (op.lossless false) on a lossless PG
  // is dropped by the threshold (0), not sent to headroom.
  const qm::EnqueueResult lossy = q.enqueue(enq(0, 3, 1, 0, 2, false));
  EXPECT_FALSE(lossy.lossless);
  EXPECT_EQ(lossy.verdict, Verdict::drop_ingress_limit);
}

// --- PFC ------------------------------------------------------------------------

struct XonCase {
  pfc::GeneratorConfig::XonRule rule;
  uint64_t offset, xon_cells;
  uint32_t ratio_q16;
};

// Static XOFF level 8. XOFF on the packet that brings shared to 8; none
// while XOFF; XON on the release whose PG state first satisfies the rule;
// none on the releases in between (the hysteresis band).
TEST(RtlQm, XoffThenXonWithHysteresis) {
  const XonCase cases[] = {
      {pfc::GeneratorConfig::XonRule::offset, 3, 0, 0},     // resume when s + 3 < 8
      {pfc::GeneratorConfig::XonRule::absolute, 0, 2, 0},   // resume when s <= 2
      {pfc::GeneratorConfig::XonRule::ratio, 0, 0, 40960},  // s * 2^16 <= 40960 * 8: s <= 5
  };
  for (const XonCase& xc : cases) {
    SCOPED_TRACE(int(xc.rule));
    qm::Config c = base(512, 2, 200, 200);
    mmu::PgProfile& g = c.mmu.ports[0].pgs[2];
    g.lossless = true;
    g.headroom_cells = 20;
    g.threshold = {ThresholdMode::static_th, 0, 100};
    c.pfc_enabled = true;
    c.pfc_pgs = 1u << 2;
    c.pfc.dynamic_xoff = false;
    c.pfc.xoff_cells = 8;
    c.pfc.xon_rule = xc.rule;
    c.pfc.xon_offset_cells = xc.offset;
    c.pfc.xon_cells = xc.xon_cells;
    c.pfc.xon_ratio_q16 = xc.ratio_q16;
    QmRtl q(c);
    auto resumes = [&](uint64_t s) {
      switch (xc.rule) {
        case pfc::GeneratorConfig::XonRule::offset: return s + xc.offset < 8;
        case pfc::GeneratorConfig::XonRule::absolute: return s <= xc.xon_cells;
        case pfc::GeneratorConfig::XonRule::ratio: return s * 65536 <= uint64_t(xc.ratio_q16) * 8;
      }
      return false;
    };
    bool xoff = false;
    for (uint32_t s = 1; s <= 11; ++s) {
      const qm::EnqueueResult e = q.enqueue(enq(0, 2, 1, 0, 1, true));
      ASSERT_EQ(e.verdict, Verdict::admit);
      const PfcAction want = !xoff && s >= 8 ? PfcAction::xoff : PfcAction::none;
      EXPECT_EQ(e.pfc, want) << "shared " << s;
      xoff = xoff || s >= 8;
      EXPECT_EQ(q.xoff(0, 2), xoff);
    }
    // A lossy PG's packets make no PFC decision (PG 1: no generator).
    EXPECT_EQ(q.enqueue(enq(0, 1, 1, 1, 1)).pfc, PfcAction::none);
    int xons = 0;
    for (uint32_t s = 10; s + 1 > 0; --s) {  // shared after each release: 10 .. 0
      const qm::DequeueResult d = q.dequeue(deq(1, 0));
      const PfcAction want = xoff && resumes(s) ? PfcAction::xon : PfcAction::none;
      EXPECT_EQ(d.pfc, want) << "shared " << s;
      if (want == PfcAction::xon) {
        xoff = false;
        ++xons;
      }
      EXPECT_EQ(q.xoff(0, 2), xoff) << s;
    }
    EXPECT_EQ(xons, 1);
    // A PG that is not XOFF: pfc_tick does nothing.
    EXPECT_EQ(q.pfc_tick(0, 2), PfcAction::none);
    EXPECT_EQ(q.last_cycles(), 1u);
  }
}

// Headroom use forces XOFF even below the level, and XON waits until the
// headroom is empty, whatever the rule says.
TEST(RtlQm, HeadroomHoldsXoff) {
  qm::Config c = base(512, 2, 200, 200);
  mmu::PgProfile& g = c.mmu.ports[0].pgs[0];
  g.lossless = true;
  g.headroom_cells = 20;
  g.threshold = {ThresholdMode::static_th, 0, 2};
  c.pfc_enabled = true;
  c.pfc_pgs = 1;
  c.pfc.dynamic_xoff = false;
  c.pfc.xoff_cells = 50;  // never reached by shared (<= 2)
  c.pfc.xon_rule = pfc::GeneratorConfig::XonRule::absolute;
  c.pfc.xon_cells = 100;  // the rule holds at any shared use
  QmRtl q(c);
  EXPECT_EQ(q.enqueue(enq(0, 0, 1, 0, 2, true)).pfc, PfcAction::none);  // shared 2, no headroom
  const qm::EnqueueResult e = q.enqueue(enq(0, 0, 1, 0, 3, true));   // 2 + 3 > 2: headroom
  EXPECT_TRUE(e.in_headroom);
  EXPECT_EQ(e.pfc, PfcAction::xoff);
  EXPECT_EQ(q.enqueue(enq(0, 0, 1, 0, 1, true)).pfc, PfcAction::none);  // headroom 4
  EXPECT_EQ(q.pfc_tick(0, 0), PfcAction::none);  // XOFF, headroom 4 > 0
  // release order headroom first: 2 cells (headroom 4 -> 2), then 3 (2 -> 0, shared 2 -> 1): XON
  EXPECT_EQ(q.dequeue(deq(1, 0)).pfc, PfcAction::none);
  const qm::DequeueResult d = q.dequeue(deq(1, 0));
  EXPECT_EQ(d.pg.headroom, 0u);
  EXPECT_EQ(d.pg.shared, 1u);
  EXPECT_EQ(d.pfc, PfcAction::xon);
}

// Dynamic XOFF level: a lossless PG goes XOFF at its threshold; the
// threshold rises only because another PG of the pool drains, which does not
// evaluate it; its refresh tick then resumes it.
TEST(RtlQm, RefreshTickResumesAfterPoolDrains) {
  qm::Config c = base(512, 2, 40, 200);
  mmu::PgProfile& a = c.mmu.ports[0].pgs[3];
  a.lossless = true;
  a.headroom_cells = 10;
  c.pfc_enabled = true;
  c.pfc_pgs = 1u << 3;
  c.pfc.dynamic_xoff = true;
  c.pfc.xon_rule = pfc::GeneratorConfig::XonRule::offset;
  c.pfc.xon_offset_cells = 4;
  QmRtl q(c);
  // PG B (port 1, PG 0, lossy, alpha 1): admitted while b < 40 - b: 20 cells.
  uint32_t b = 0;
  while (q.enqueue(enq(1, 0, 0, 0, 1)).admitted()) ++b;
  EXPECT_EQ(b, 20u);
  // PG A: shared k after its admit, threshold 20 - k: XOFF once k >= 20 - k.
  for (uint32_t k = 1; k <= 10; ++k) {
    const qm::EnqueueResult e = q.enqueue(enq(0, 3, 1, 3, 1, true));
    EXPECT_FALSE(e.in_headroom);
    EXPECT_EQ(e.pg.threshold, 20u - k);
    EXPECT_EQ(e.pfc, k >= 20 - k ? PfcAction::xoff : PfcAction::none) << k;
  }
  EXPECT_TRUE(q.xoff(0, 3));
  // XON at the tick needs 10 + 4 < 40 - 10 - b_left, i.e. b_left < 16.
  for (uint32_t left = 19; left + 1 > 0; --left) {
    EXPECT_EQ(q.dequeue(deq(0, 0)).pfc, PfcAction::none);  // B's own: lossy, no generator
    EXPECT_TRUE(q.xoff(0, 3));  // A is not evaluated
    if (left == 17) {
      EXPECT_EQ(q.pfc_tick(0, 3), PfcAction::none);  // 14 < 13 fails
    }
    if (left == 15) {
      EXPECT_EQ(q.pfc_tick(0, 3), PfcAction::xon);  // 14 < 15
      EXPECT_FALSE(q.xoff(0, 3));
      break;
    }
  }
  EXPECT_EQ(q.pfc_tick(0, 3), PfcAction::none);
}

// --- ECN ------------------------------------------------------------------------

// WRED in cells, Kmin 10, Kmax 20: q <= Kmin never draws; Kmin < q <= Kmax
// draws and fires iff r * (Kmax - Kmin) < (q - Kmin) * P32; q > Kmax fires
// without a draw. Each end of the ramp is probed on both sides of the
// boundary word, for Pmax 1/2 (P32 = 2^31) and Pmax 1 (P32 = 2^32, bit 32).
TEST(RtlQm, WredCompareAtRampEnds) {
  for (double pmax : {0.5, 1.0}) {
    SCOPED_TRACE(pmax);
    const uint64_t p32 = pmax == 1.0 ? uint64_t(1) << 32 : uint64_t(1) << 31;
    qm::Config c = base(512, 2, 300, 300);
    c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 300};
    ecn::MarkerConfig& m = c.ecn[4];
    m.mode = ecn::MarkerConfig::Mode::wred;
    m.unit = ecn::MarkerConfig::Unit::cells;
    m.kmin = 10;
    m.kmax = 20;
    m.pmax = pmax;
    QmRtl q(c);
    const uint64_t d = 20 - 10;
    // Brings the queue to exactly n cells (1-cell packets, no ECN frames).
    uint32_t len = 0;
    auto set_len = [&](uint32_t n) {
      for (; len < n; ++len) ASSERT_TRUE(q.enqueue(enq(0, 0, 1, 4, 1)).admitted());
      for (; len > n; --len) q.dequeue(deq(1, 4));
    };
    // The largest word that fires at queue length ql: r * d < (ql - 10) * p32.
    auto last_firing = [&](uint64_t ql) {
      const uint64_t rhs = (ql - 10) * p32;
      return std::min<uint64_t>((rhs - 1) / d, 0xffffffffu);
    };
    struct Probe {
      uint32_t qlen;
      uint64_t r;
      bool drew, fired;
    };
    std::vector<Probe> probes = {{9, 0, false, false}, {10, 0, false, false}, {21, 0xffffffffu, false, true},
                                 {30, 0xffffffffu, false, true}};
    for (uint32_t ql : {11u, 20u}) {
      const uint64_t w = last_firing(ql);
      probes.push_back({ql, w, true, true});
      if (w < 0xffffffffu) probes.push_back({ql, w + 1, true, false});
      probes.push_back({ql, 0, true, true});
    }
    for (const Probe& p : probes) {
      set_len(p.qlen);
      qm::EnqueueOp op = enq(0, 0, 1, 4, 1);
      op.ecn_frame = true;
      op.ecn = ecn::codepoint::kEct0;
      op.rand32 = static_cast<uint32_t>(p.r);
      const qm::EnqueueResult e = q.enqueue(op);
      ++len;
      EXPECT_TRUE(e.ecn.decided);
      EXPECT_EQ(e.ecn.drew, p.drew) << "q " << p.qlen << " r " << p.r;
      EXPECT_EQ(e.ecn.fired, p.fired) << "q " << p.qlen << " r " << p.r;
      EXPECT_EQ(e.ecn.mark, p.fired);
    }
    // At q = Kmax with Pmax 1 every word fires (r * d < d * 2^32).
    if (pmax == 1.0) {
      EXPECT_EQ(last_firing(20), 0xffffffffu);
    }
  }
}

// Threshold (q > K; q == K does not fire), codepoints (only ECT(0)/ECT(1)
// are marked), hysteresis (set above K_high, cleared below K_low), bytes as
// the unit, the enqueue point seeing the queue before the packet and the
// dequeue point the queue left behind, a discarded dequeue deciding nothing.
TEST(RtlQm, EcnThresholdHysteresisAndPoints) {
  qm::Config c = base(512, 2, 300, 300);
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 300};
  ecn::MarkerConfig& t = c.ecn[0];
  t.mode = ecn::MarkerConfig::Mode::threshold;
  t.unit = ecn::MarkerConfig::Unit::bytes;
  t.k = 3 * kCell;  // fires when the bytes found exceed 768
  ecn::MarkerConfig& h = c.ecn[1];
  h.mode = ecn::MarkerConfig::Mode::hysteresis;
  h.point = ecn::MarkerConfig::Point::dequeue;
  h.unit = ecn::MarkerConfig::Unit::cells;
  h.k_high = 6;
  h.k_low = 3;
  QmRtl q(c);

  // threshold at enqueue: the bytes before the packet, 0, 256, ..., 1536
  const uint8_t cps[] = {ecn::codepoint::kNotEct, ecn::codepoint::kEct1, ecn::codepoint::kEct0, ecn::codepoint::kCe};
  for (uint32_t i = 0; i < 7; ++i) {
    qm::EnqueueOp op = enq(0, 0, 1, 0, 1);
    op.ecn_frame = true;
    op.ecn = cps[i % 4];
    const qm::EnqueueResult e = q.enqueue(op);
    const bool fired = uint64_t(i) * kCell > 3 * kCell;
    EXPECT_TRUE(e.ecn.decided);
    EXPECT_FALSE(e.ecn.drew);
    EXPECT_EQ(e.ecn.fired, fired) << i;
    EXPECT_EQ(e.ecn.mark, fired && (op.ecn == ecn::codepoint::kEct0 || op.ecn == ecn::codepoint::kEct1)) << i;
  }
  // not an ECN frame: no decision
  EXPECT_FALSE(q.enqueue(enq(0, 0, 1, 0, 1)).ecn.decided);

  // hysteresis at dequeue, on the cells left behind. Each step brings the
  // queue to n + 1 packets of 1 cell (the enqueues decide nothing at a
  // dequeue-point marker), then dequeues one, leaving n: the boundaries
  // q == K_high (does not set) and q == K_low (does not clear) are visited
  // with the flag off and on, and a discard in between changes nothing.
  uint32_t len = 0;
  bool on = false;
  struct Step {
    uint32_t left;
    bool discard;
  };
  const Step steps[] = {{6, false}, {7, false}, {5, false}, {3, false}, {4, false}, {2, false}, {3, false},
                        {6, false}, {7, false}, {2, true},  {3, false}, {1, false}, {0, false}};
  for (const Step& st : steps) {
    for (; len < st.left + 1; ++len) {
      qm::EnqueueOp op = enq(0, 0, 1, 1, 1);
      op.ecn_frame = true;
      ASSERT_FALSE(q.enqueue(op).ecn.decided);
    }
    for (; len > st.left + 1; --len) q.dequeue(deq(1, 1));  // not ECN frames: no decision
    qm::DequeueOp op = deq(1, 1);
    op.ecn_frame = true;
    op.ecn = ecn::codepoint::kEct1;
    op.discard = st.discard;
    const qm::DequeueResult d = q.dequeue(op);
    --len;
    if (st.discard) {
      EXPECT_FALSE(d.ecn.decided);
      EXPECT_EQ(q.ecn_hysteresis(1, 1), on);
      continue;
    }
    if (st.left > 6) on = true;
    else if (st.left < 3) on = false;
    EXPECT_TRUE(d.ecn.decided);
    EXPECT_EQ(d.ecn.fired, on) << st.left;
    EXPECT_EQ(d.ecn.mark, on) << st.left;
    EXPECT_EQ(q.ecn_hysteresis(1, 1), on) << st.left;
  }
}

// --- free list and queues ---------------------------------------------------------

// The free list is LIFO: a dequeued packet's chain goes back whole, its head
// first, and the next enqueue takes those cells again; chains read back
// through next_cell. The expectation is a list kept here by the rule.
TEST(RtlQm, FreeListReuseLifo) {
  const uint32_t total = 64;
  qm::Config c = base(total, 2, 60, 60);
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 60};
  QmRtl q(c);
  std::deque<uint32_t> free_list;
  for (uint32_t i = 0; i < total; ++i) free_list.push_back(i);
  std::deque<std::vector<uint32_t>> queued;  // chains of (1, 0), FIFO

  auto check_free = [&]() {
    ASSERT_EQ(q.free_cells(), free_list.size());
    ASSERT_EQ(q.free_head(), free_list.empty() ? qm::kNoCell : free_list.front());
    for (size_t i = 0; i + 1 < free_list.size(); ++i) ASSERT_EQ(q.next_cell(free_list[i]), free_list[i + 1]) << i;
    if (!free_list.empty()) {
      ASSERT_EQ(q.next_cell(free_list.back()), qm::kNoCell);
    }
  };
  auto put = [&](uint32_t cells) {
    const qm::EnqueueResult e = q.enqueue(enq(0, 0, 1, 0, cells));
    ASSERT_TRUE(e.admitted());
    std::vector<uint32_t> chain(free_list.begin(), free_list.begin() + cells);
    free_list.erase(free_list.begin(), free_list.begin() + cells);
    EXPECT_EQ(e.head_cell, chain.front());
    for (size_t i = 0; i + 1 < chain.size(); ++i) EXPECT_EQ(q.next_cell(chain[i]), chain[i + 1]);
    EXPECT_EQ(q.next_cell(chain.back()), qm::kNoCell);
    EXPECT_EQ(q.last_cycles(), 1 + cells);
    queued.push_back(chain);
  };
  auto take = [&]() {
    const std::vector<uint32_t> chain = queued.front();
    queued.pop_front();
    const qm::DequeueResult d = q.dequeue(deq(1, 0));
    EXPECT_EQ(d.head_cell, chain.front());
    EXPECT_EQ(d.cells, chain.size());
    EXPECT_EQ(d.bytes, chain.size() * kCell);
    EXPECT_EQ(q.last_cycles(), 1 + chain.size());
    free_list.insert(free_list.begin(), chain.begin(), chain.end());
  };
  check_free();
  put(3);
  put(2);
  put(5);
  check_free();
  take();  // cells 0..2 back in front of 10..63
  check_free();
  put(4);  // 0, 1, 2, 10
  check_free();
  take();
  take();
  put(1);
  put(7);
  check_free();
  while (!queued.empty()) take();
  check_free();
  EXPECT_EQ(q.free_cells(), total);
}

// Packets of several queues interleaved: each queue is FIFO (head cell,
// bytes and cells in arrival order), with its packet and byte counters.
TEST(RtlQm, FifoOrderPerQueue) {
  qm::Config c = base(512, 3, 400, 400);
  c.mmu.ports[0].pgs[0].threshold = {ThresholdMode::static_th, 0, 400};
  QmRtl q(c);
  struct Pkt {
    uint32_t head, cells, bytes;
  };
  std::map<std::pair<uint16_t, uint8_t>, std::deque<Pkt>> want;
  const std::pair<uint16_t, uint8_t> queues[] = {{1, 0}, {1, 3}, {2, 0}, {2, 7}};
  uint32_t n = 0;
  for (int round = 0; round < 6; ++round) {
    for (const auto& [port, qu] : queues) {
      const uint32_t cells = 1 + (n * 7) % 5;
      qm::EnqueueOp op = enq(0, 0, port, qu, cells);
      op.bytes = cells * kCell - (n % kCell);  // distinct byte counts, same cells
      const qm::EnqueueResult e = q.enqueue(op);
      ASSERT_TRUE(e.admitted());
      want[{port, qu}].push_back({e.head_cell, cells, op.bytes});
      ++n;
    }
    // take one from a different queue each round
    const auto key = queues[round % 4];
    std::deque<Pkt>& w = want[key];
    const qm::DequeueResult d = q.dequeue(deq(key.first, key.second));
    EXPECT_EQ(d.head_cell, w.front().head);
    EXPECT_EQ(d.cells, w.front().cells);
    EXPECT_EQ(d.bytes, w.front().bytes);
    w.pop_front();
  }
  for (auto& [key, w] : want) {
    uint64_t bytes = 0;
    for (const Pkt& p : w) bytes += p.bytes;
    EXPECT_EQ(q.queue_packets(key.first, key.second), w.size());
    EXPECT_EQ(q.queue_bytes(key.first, key.second), bytes);
    EXPECT_EQ(q.head_cell(key.first, key.second), w.front().head);
    EXPECT_EQ(q.queue_tail(key.first, key.second), w.back().head);
    while (!w.empty()) {
      const qm::DequeueResult d = q.dequeue(deq(key.first, key.second));
      EXPECT_EQ(d.head_cell, w.front().head);
      EXPECT_EQ(d.bytes, w.front().bytes);
      w.pop_front();
    }
    EXPECT_EQ(q.head_cell(key.first, key.second), qm::kNoCell);
    EXPECT_EQ(q.queue_bytes(key.first, key.second), 0u);
  }
  EXPECT_EQ(q.free_cells(), 512u);
}

// The verilated build at its own scale: every cell of the memory, the last
// port, PG and queue, a 1-cell packet (free count 2^16 - 1) then one of
// 65 534 cells (res_cycles = 1 + cells = 2^16 - 1, the most its 16 bits
// hold; pool use 2^16 - 1) of the largest cell that keeps total_cells *
// cell_bytes within BYTE_W = 32 bits, pools of 2^16 - 1 cells and alpha =
// 2^7, so the cell pointers, counters, byte counts and thresholds carry
// values with most of their bits set (toggle coverage, docs/rtl.md). The
// expectations are the rules: the free list 0, 1, .. in order, a chain taken
// from its head and pushed back whole in front of the rest (LIFO), the
// threshold 2^7 * (pool - used).
TEST(RtlQm, FullScaleCellsPortsAndWidths) {
  const uint32_t total = QmRtl::kCells, pool_cells = total - 1, n = total - 2, cell_bytes = 65535;
  ASSERT_LE(uint64_t(total) * cell_bytes, (uint64_t(1) << QmRtl::kByteW) - 1);
  const uint16_t port = QmRtl::kPorts - 1;
  const uint8_t idx = 7;
  qm::Config c = base(total, QmRtl::kPorts, pool_cells, pool_cells);
  c.mmu.cell_bytes = cell_bytes;
  mmu::PgProfile& g = c.mmu.ports[port].pgs[idx];
  g.threshold.mode = ThresholdMode::dynamic_th;
  g.threshold.dynamic_th = 7;
  QmRtl q(c);
  ASSERT_EQ(q.free_cells(), total);
  EXPECT_EQ(q.next_cell(total - 2), total - 1);
  EXPECT_EQ(q.next_cell(total - 1), qm::kNoCell);
  EXPECT_EQ(q.pg_state(port, idx).threshold, dt(pool_cells, 0, 7));

  qm::EnqueueOp small = enq(port, idx, port, idx, 1);
  small.bytes = cell_bytes;
  const qm::EnqueueResult e1 = q.enqueue(small);
  ASSERT_TRUE(e1.admitted());
  EXPECT_EQ(e1.head_cell, 0u);
  EXPECT_EQ(q.free_cells(), total - 1);
  EXPECT_EQ(q.free_head(), 1u);

  qm::EnqueueOp big = enq(port, idx, port, idx, n);
  big.bytes = uint64_t(n) * cell_bytes;
  const qm::EnqueueResult e = q.enqueue(big);
  ASSERT_TRUE(e.admitted());  // shared 1 < 2^7 * (pool - 1), 1 + n <= pool
  EXPECT_EQ(e.head_cell, 1u);
  EXPECT_EQ(e.charge.in_shared, n);
  EXPECT_EQ(e.charge.eg_shared, n);
  EXPECT_EQ(q.last_cycles(), 1 + n);
  EXPECT_EQ(q.queue_packets(port, idx), 2u);
  EXPECT_EQ(q.queue_bytes(port, idx), small.bytes + big.bytes);
  EXPECT_EQ(q.head_cell(port, idx), 0u);
  EXPECT_EQ(q.queue_tail(port, idx), 1u);
  EXPECT_EQ(q.pg_state(port, idx).shared, 1 + n);
  EXPECT_EQ(q.pg_state(port, idx).threshold, dt(pool_cells, 1 + n, 7));
  EXPECT_EQ(q.queue_state(port, idx).shared, 1 + n);
  EXPECT_EQ(q.pool_used(0), 1 + n);
  EXPECT_EQ(q.pool_used(1), 1 + n);
  EXPECT_EQ(q.free_cells(), 1u);
  EXPECT_EQ(q.free_head(), total - 1);
  EXPECT_EQ(q.next_cell(0), qm::kNoCell);
  EXPECT_EQ(q.next_cell(n - 1), n);
  EXPECT_EQ(q.next_cell(n), qm::kNoCell);

  const qm::DequeueResult d1 = q.dequeue(deq(port, idx));
  EXPECT_EQ(d1.head_cell, 0u);
  EXPECT_EQ(d1.cells, 1u);
  EXPECT_EQ(q.free_head(), 0u);
  EXPECT_EQ(q.next_cell(0), total - 1);
  const qm::DequeueResult d = q.dequeue(deq(port, idx));
  EXPECT_EQ(d.head_cell, 1u);
  EXPECT_EQ(d.cells, n);
  EXPECT_EQ(d.bytes, big.bytes);
  EXPECT_EQ(q.last_cycles(), 1 + n);
  EXPECT_EQ(q.free_cells(), total);
  EXPECT_EQ(q.free_head(), 1u);
  EXPECT_EQ(q.next_cell(n), 0u);  // the chain's end continues with the rest of the list: 0, then 65 535
  EXPECT_EQ(q.next_cell(total - 1), qm::kNoCell);
  EXPECT_EQ(q.head_cell(port, idx), qm::kNoCell);
  EXPECT_EQ(q.pg_state(port, idx).shared, 0u);
  EXPECT_EQ(q.pg_state(port, idx).threshold, dt(pool_cells, 0, 7));
}

// --- errors and limits -------------------------------------------------------------

TEST(RtlQm, MalformedOperationsChangeNothing) {
  qm::Config c = base(128, 2, 100, 100);
  QmRtl q(c);
  ASSERT_TRUE(q.enqueue(enq(0, 0, 1, 0, 2)).admitted());
  EXPECT_THROW(q.dequeue(deq(1, 1)), std::logic_error);      // empty queue
  EXPECT_THROW(q.enqueue(enq(0, 0, 1, 0, 0)), std::invalid_argument);  // zero cells
  EXPECT_THROW(q.enqueue(enq(2, 0, 1, 0, 1)), std::invalid_argument);  // port 2 of 2
  EXPECT_THROW(q.enqueue(enq(0, 8, 1, 0, 1)), std::invalid_argument);  // PG 8
  EXPECT_THROW(q.pfc_tick(3, 0), std::invalid_argument);
  EXPECT_EQ(q.free_cells(), 126u);
  EXPECT_EQ(q.queue_packets(1, 0), 1u);
  EXPECT_EQ(q.pg_state(0, 0).shared, 2u);
  EXPECT_EQ(q.dequeue(deq(1, 0)).cells, 2u);
}

TEST(RtlQm, ConfigurationBeyondTheRtlIsRefused) {
  EXPECT_THROW(QmRtl(base(QmRtl::kCells + 1, 2, 10, 10)), std::invalid_argument);
  EXPECT_THROW(QmRtl(base(64, QmRtl::kPorts + 1, 10, 10)), std::invalid_argument);
  qm::Config c = base(64, 2, 10, 10);
  c.pfc.xoff_cells = uint64_t(1) << QmRtl::kPfcW;
  EXPECT_THROW(QmRtl{c}, std::invalid_argument);
  qm::Config bad = base(64, 2, 100, 10);  // pool larger than the buffer: mmu::validate
  EXPECT_THROW(QmRtl{bad}, std::invalid_argument);
  // check() refuses the same without building the model, and accepts what fits.
  EXPECT_THROW(QmRtl::check(base(QmRtl::kCells + 1, 2, 10, 10)), std::invalid_argument);
  EXPECT_THROW(QmRtl::check(base(64, QmRtl::kPorts + 1, 10, 10)), std::invalid_argument);
  EXPECT_THROW(QmRtl::check(c), std::invalid_argument);
  EXPECT_THROW(QmRtl::check(bad), std::invalid_argument);
  EXPECT_NO_THROW(QmRtl::check(base(64, 2, 10, 10)));
  qm::Config widest = base(64, 2, 10, 10);  // the widest XOFF that fits
  widest.pfc.xoff_cells = (uint64_t(1) << QmRtl::kPfcW) - 1;
  EXPECT_NO_THROW(QmRtl::check(widest));
}

// --- the raw ports ----------------------------------------------------------------

// The Verilated model driven directly, for what QmRtl never does: CSR writes
// outside the map and an op_kind that is no operation. Addresses and fields
// are those of the CSR map in docs/rtl.md (qm_pkg.sv).
class RawQm {
 public:
  struct Result {
    bool error, ecn_decided, ecn_fired;
    uint32_t verdict, cycles;
  };
  RawQm() : m_top(&m_ctx, "qm") {
    m_top.clk = 0;
    m_top.rst = 1;
    m_top.csr_valid = 0;
    m_top.op_valid = 0;
    tick();
    tick();
    m_top.rst = 0;
  }
  ~RawQm() {
    m_top.final();
    rtl::write_coverage(m_ctx);  // the coverage build's counters (docs/rtl.md, "Coverage")
  }
  void tick() {
    m_top.clk = 1;
    m_top.eval();
    m_top.clk = 0;
    m_top.eval();
  }
  // address {region[23:20], index[19:8], sub[7:5], field[4:0]}
  void csr(uint32_t region, uint32_t index, uint32_t sub, uint32_t field, uint32_t data) {
    m_top.csr_valid = 1;
    m_top.csr_addr = region << 20 | index << 8 | sub << 5 | field;
    m_top.csr_data = data;
    tick();
    m_top.csr_valid = 0;
  }
  void init() {
    csr(0, 0, 0, 0, 1);  // CTRL: build the free list
    for (int guard = 0; m_top.busy; ++guard) {
      ASSERT_LT(guard, 1 << 20);
      tick();
    }
  }
  uint32_t pg_threshold(uint32_t port, uint32_t pg) { return read(port, pg).rd_pg_threshold; }
  uint32_t queue_threshold(uint32_t port, uint32_t queue) { return read(port, queue).rd_q_threshold; }
  uint32_t queue_packets(uint32_t port, uint32_t queue) { return read(port, queue).rd_q_packets; }
  uint32_t free_cells() const { return m_top.rd_free_count; }
  // One operation on the valid/ready port: the result in its res_valid cycle.
  Result op(uint32_t kind, uint32_t in_port, uint32_t pg, uint32_t out_port, uint32_t queue, uint32_t cells) {
    m_top.op_kind = kind;
    m_top.op_in_port = in_port;
    m_top.op_pg = pg;
    m_top.op_out_port = out_port;
    m_top.op_queue = queue;
    m_top.op_cells = cells;
    m_top.op_bytes = cells * kCell;
    m_top.op_lossless = 0;
    m_top.op_ecn_frame = 1;
    m_top.op_ecn = 1;  // ECT(1)
    m_top.op_rand32 = 0;
    m_top.op_discard = 0;
    m_top.op_valid = 1;
    m_top.eval();
    EXPECT_TRUE(m_top.op_ready);
    tick();  // accepted at this edge
    m_top.op_valid = 0;
    for (int guard = 0; !m_top.res_valid && guard < 1000; ++guard) tick();
    EXPECT_TRUE(m_top.res_valid);
    return {bool(m_top.res_error), bool(m_top.res_ecn_decided), bool(m_top.res_ecn_fired), m_top.res_verdict,
            m_top.res_cycles};
  }

 private:
  const Vqm& read(uint32_t port, uint32_t idx) {
    m_top.rd_qidx = port * 8 + idx;
    m_top.eval();
    return m_top;
  }
  VerilatedContext m_ctx;  // before the model: it must outlive it
  Vqm m_top;
};

// Writes outside the CSR map change nothing, each one of an address that
// would alias a register if the decode were partial: pool index POOLS and
// port index P (aliases of pool 0 and port 0 or 1 if only the index's low
// bits were decoded), a field with bit 4 or 3 set over a valid code, region 9
// (1 in its low 3 bits: the pool region). Each register's effect is read
// back (a threshold) or seen in a decision (ECN), before and after; then
// writes to the register itself show the read-back follows it. op_kind 3 is
// no operation: an error result after 1 cycle (qm.sv's timing), nothing
// changed.
TEST(RtlQm, RawPortsWritesOutsideTheCsrMapAndUnknownOpKind) {
  RawQm m;
  const uint32_t P = QmRtl::kPorts, POOLS = QmRtl::kPools;
  constexpr uint32_t kGlobal = 0, kPool = 1, kEcn = 2, kPg = 3, kQueue = 4;
  constexpr uint32_t kFlags = 0, kStatic = 2;
  m.csr(kGlobal, 0, 0, 1, 64);  // TOTAL_CELLS
  m.csr(kGlobal, 0, 0, 2, 2);   // PORTS
  m.csr(kPool, 0, 0, 0, 40);
  m.csr(kPool, 1, 0, 0, 40);
  m.csr(kPg, 0, 0, kFlags, 1u << 1);  // port 0 PG 0: dynamic, n = 0, pool 0
  m.csr(kPg, 0, 1, kFlags, 0);        // port 0 PG 1: static, pool 0
  m.csr(kPg, 0, 1, kStatic, 25);
  m.csr(kQueue, 1, 0, kFlags, 1u << 8);  // port 1 queue 0: static, pool 1
  m.csr(kQueue, 1, 0, kStatic, 30);
  m.csr(kEcn, 0, 0, 0, 1);  // queue 0: threshold, at enqueue, in bytes
  m.csr(kEcn, 0, 0, 1, 0);  // K = 0
  m.init();
  // alpha * (pool - used) with alpha = 2^0; static values as written
  ASSERT_EQ(m.pg_threshold(0, 0), 40u);
  ASSERT_EQ(m.pg_threshold(0, 1), 25u);
  ASSERT_EQ(m.queue_threshold(1, 0), 30u);

  m.csr(kPool, POOLS, 0, 0, 7);  // no such pool
  m.csr(kPool, 0, 0, 1, 7);      // no such pool field
  m.csr(9, 0, 0, 0, 7);          // no such region
  EXPECT_EQ(m.pg_threshold(0, 0), 40u);
  m.csr(kPg, P, 1, kStatic, 9);        // no such port
  m.csr(kPg, 0, 1, kStatic | 16, 9);   // no such PG field
  EXPECT_EQ(m.pg_threshold(0, 1), 25u);
  m.csr(kQueue, P + 1, 0, kStatic, 9);       // no such port
  m.csr(kQueue, 1, 0, kStatic | 16, 9);      // no such queue field
  EXPECT_EQ(m.queue_threshold(1, 0), 30u);
  m.csr(kEcn, 0, 0, 1 | 8, 1000000);  // no such ECN field (K would make the second packet unmarked)

  m.csr(kPool, 0, 0, 0, 36);
  m.csr(kPg, 0, 1, kStatic, 20);
  m.csr(kQueue, 1, 0, kStatic, 28);
  EXPECT_EQ(m.pg_threshold(0, 0), 36u);
  EXPECT_EQ(m.pg_threshold(0, 1), 20u);
  EXPECT_EQ(m.queue_threshold(1, 0), 28u);

  // ECN threshold K = 0 in bytes, the queue as the packet finds it: 0 > 0 does
  // not fire, 256 > 0 does.
  const RawQm::Result first = m.op(0, 0, 0, 1, 0, 1);
  EXPECT_FALSE(first.error);
  EXPECT_EQ(first.verdict, 0u);  // admit
  EXPECT_TRUE(first.ecn_decided);
  EXPECT_FALSE(first.ecn_fired);
  const RawQm::Result second = m.op(0, 0, 0, 1, 0, 1);
  EXPECT_EQ(second.verdict, 0u);
  EXPECT_TRUE(second.ecn_fired);
  EXPECT_EQ(m.free_cells(), 62u);

  const RawQm::Result none = m.op(3, 0, 0, 1, 0, 1);
  EXPECT_TRUE(none.error);
  EXPECT_FALSE(none.ecn_decided);
  EXPECT_EQ(none.cycles, 1u);
  EXPECT_EQ(m.free_cells(), 62u);
  EXPECT_EQ(m.queue_packets(1, 0), 2u);
  EXPECT_EQ(m.pg_threshold(0, 0), 34u);  // pool 0 at 36 with the two cells in shared
}

// QmRtl::trace writes an FST of the RTL's signals (Verilator's own FST
// writer). Read back with GTKWave's fst2vcd when it is installed: the ports
// are there and res_valid pulsed once per operation.
TEST(RtlQm, TraceWritesFst) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem = "test_rtl_qm_" + std::to_string(::getpid());
  const std::filesystem::path fst = dir / (stem + ".fst"), vcd = dir / (stem + ".vcd");
  {
    QmRtl q(base(64, 2, 30, 30));
    q.trace(fst.string());
    ASSERT_TRUE(q.enqueue(enq(0, 0, 1, 0, 3)).admitted());
    q.dequeue(deq(1, 0));
  }
  ASSERT_TRUE(std::filesystem::exists(fst));
  EXPECT_GT(std::filesystem::file_size(fst), 100u);
  if (std::system("command -v fst2vcd >/dev/null 2>&1") != 0) {
    std::filesystem::remove(fst);
    GTEST_SKIP() << "fst2vcd not installed: the FST's content is not checked";
  }
  ASSERT_EQ(std::system(("fst2vcd -f " + fst.string() + " -o " + vcd.string() + " >/dev/null 2>&1").c_str()), 0);
  std::ifstream in(vcd);
  std::string line, res_valid_id;
  int rises = 0;
  bool op_ready = false;
  while (std::getline(in, line)) {
    if (line.find("$var") != std::string::npos && line.find(" res_valid ") != std::string::npos &&
        res_valid_id.empty()) {
      // $var wire 1 <id> res_valid $end
      size_t a = line.find(" 1 ") + 3;
      res_valid_id = line.substr(a, line.find(' ', a) - a);
    }
    if (line.find(" op_ready ") != std::string::npos) op_ready = true;
    if (!res_valid_id.empty() && line == "1" + res_valid_id) ++rises;
  }
  std::filesystem::remove(fst);
  std::filesystem::remove(vcd);
  EXPECT_TRUE(op_ready);
  ASSERT_FALSE(res_valid_id.empty());
  EXPECT_EQ(rises, 2);
}

// The rising-edge times of a 1-bit signal (the first $var of that name) in a VCD.
std::vector<uint64_t> rising_times(const std::string& vcd, const std::string& name) {
  std::ifstream in(vcd);
  std::string line, id;
  uint64_t t = 0;
  std::vector<uint64_t> out;
  while (std::getline(in, line)) {
    if (id.empty() && line.find("$var") != std::string::npos && line.find(" " + name + " ") != std::string::npos) {
      const size_t a = line.find(" 1 ") + 3;  // $var wire 1 <id> name $end
      id = line.substr(a, line.find(' ', a) - a);
    } else if (!line.empty() && line[0] == '#') {
      t = std::stoull(line.substr(1));
    } else if (!id.empty() && line == "1" + id) {
      out.push_back(t);
    }
  }
  return out;
}

// set_clock puts the waveform in simulated time (docs/rtl.md "Timing" and
// qm_rtl.h): an operation issued at t takes 1 + res_cycles rising edges (the
// accepting edge, then res_cycles more to its result), the first at t, or one
// period after the previous rising edge when that is later. Period 1000 ps:
// an admitted 3-cell enqueue at 10 000 ps (res_cycles 1 + 3), a dequeue of it
// issued at the same time (1 + 3, so it starts after the enqueue's last
// edge), and a PFC tick at 50 000 ps (res_cycles 1).
TEST(RtlQm, TraceInSimulatedTime) {
  if (std::system("command -v fst2vcd >/dev/null 2>&1") != 0) GTEST_SKIP() << "fst2vcd not installed";
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem = "test_rtl_clock_" + std::to_string(::getpid());
  const std::filesystem::path fst = dir / (stem + ".fst"), vcd = dir / (stem + ".vcd");
  constexpr uint64_t kPeriod = 1000;
  uint64_t now = 10000;
  {
    QmRtl q(base(64, 2, 30, 30));
    q.set_clock(kPeriod, [&now] { return now; });
    q.trace(fst.string());
    ASSERT_TRUE(q.enqueue(enq(0, 0, 1, 0, 3)).admitted());
    ASSERT_EQ(q.last_cycles(), 4u);
    q.dequeue(deq(1, 0));
    now = 50000;
    q.pfc_tick(0, 0);
  }
  ASSERT_EQ(std::system(("fst2vcd -f " + fst.string() + " -o " + vcd.string() + " >/dev/null 2>&1").c_str()), 0);
  std::vector<uint64_t> want;
  for (uint64_t k = 0; k < 1 + 4; ++k) want.push_back(10000 + k * kPeriod);     // enqueue
  for (uint64_t k = 0; k < 1 + 4; ++k) want.push_back(15000 + k * kPeriod);     // dequeue, after it
  for (uint64_t k = 0; k < 1 + 1; ++k) want.push_back(50000 + k * kPeriod);     // tick
  EXPECT_EQ(rising_times(vcd.string(), "clk"), want);
  std::filesystem::remove(fst);
  std::filesystem::remove(vcd);
}

}  // namespace
}  // namespace rocesim
