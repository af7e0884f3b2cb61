// The queue manager block (tlm/qm): free list and chains, per-queue FIFO
// lists, the order of effects of enqueue/dequeue/pfc_tick, the queue length
// the ECN decision sees at each point, the WRED word as an input, XOFF/XON
// from the PG's state after each operation. Expected values follow from the
// rules tlm/qm/queue_manager.h states (and mmu.h / pfc.h / marker.h), worked
// out in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "../mmu/mmu_test_util.h"
#include "qm/queue_manager.h"
#include "../core/resident.h"

using namespace rocesim;
using mmu::test::base_config;

namespace {

constexpr uint32_t kTotal = 64;

// 2 ports, 64 cells, pools large enough never to bind unless a test says so;
// every marker off, PFC off.
qm::Config config() {
  qm::Config c;
  c.mmu = base_config(2, kTotal, kTotal, kTotal);
  for (ecn::MarkerConfig& m : c.ecn) m.mode = ecn::MarkerConfig::Mode::off;
  return c;
}

qm::EnqueueOp enq(uint16_t in, uint16_t out, uint8_t q, uint32_t cells, uint32_t bytes = 0) {
  qm::EnqueueOp o;
  o.in_port = in;
  o.pg = q;
  o.out_port = out;
  o.queue = q;
  o.cells = cells;
  o.bytes = bytes ? bytes : cells * 256;
  return o;
}

qm::DequeueOp deq(uint16_t port, uint8_t q) {
  qm::DequeueOp o;
  o.port = port;
  o.queue = q;
  return o;
}

std::vector<uint32_t> chain(const qm::QueueManager& m, uint32_t head) {
  std::vector<uint32_t> v;
  for (uint32_t c = head; c != qm::kNoCell && v.size() <= kTotal; c = m.next_cell(c)) v.push_back(c);
  return v;
}

}  // namespace

// A fresh free list hands out 0, 1, 2, ... in order; a freed chain goes back
// whole on top (LIFO), so its cells are handed out next, in chain order.
TEST(QueueManager, FreeListIsLifoAndChainsFollowIt) {
  qm::QueueManager m(config());
  const qm::EnqueueResult a = m.enqueue(enq(0, 1, 0, 3));
  const qm::EnqueueResult b = m.enqueue(enq(0, 1, 0, 2));
  ASSERT_TRUE(a.admitted() && b.admitted());
  EXPECT_EQ(chain(m, a.head_cell), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(chain(m, b.head_cell), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(m.free_cells(), kTotal - 5);
  const qm::DequeueResult d = m.dequeue(deq(1, 0));
  EXPECT_EQ(d.head_cell, 0u);
  EXPECT_EQ(d.cells, 3u);
  EXPECT_EQ(m.free_cells(), kTotal - 2);
  EXPECT_EQ(m.free_list_length(), kTotal - 2);
  // Free list now 0, 1, 2, 5, 6, ...: a 4-cell packet takes 0, 1, 2, 5.
  const qm::EnqueueResult c = m.enqueue(enq(0, 1, 0, 4));
  EXPECT_EQ(chain(m, c.head_cell), (std::vector<uint32_t>{0, 1, 2, 5}));
}

// Each queue is FIFO; queues are independent; packets and bytes are counted.
TEST(QueueManager, QueuesAreFifoAndCountPacketsAndBytes) {
  qm::QueueManager m(config());
  std::vector<uint32_t> heads3, heads5;
  for (uint32_t i = 0; i < 4; ++i) {
    heads3.push_back(m.enqueue(enq(0, 1, 3, 1 + i, 100 + i)).head_cell);
    heads5.push_back(m.enqueue(enq(1, 1, 5, 1, 64)).head_cell);
  }
  EXPECT_EQ(m.queue_packets(1, 3), 4u);
  EXPECT_EQ(m.queue_bytes(1, 3), 100u + 101 + 102 + 103);
  EXPECT_EQ(m.queue_bytes(1, 5), 4u * 64);
  EXPECT_EQ(m.head_cell(1, 3), heads3[0]);
  EXPECT_EQ(m.head_cell(0, 3), qm::kNoCell);
  for (uint32_t i = 0; i < 4; ++i) {
    const qm::DequeueResult d = m.dequeue(deq(1, 3));
    EXPECT_EQ(d.head_cell, heads3[i]);
    EXPECT_EQ(d.cells, 1 + i);
    EXPECT_EQ(d.bytes, 100 + i);
    EXPECT_EQ(d.charge.in_port, 0u);
    EXPECT_EQ(d.charge.queue, 3u);
  }
  EXPECT_EQ(m.head_cell(1, 3), qm::kNoCell);
  EXPECT_EQ(m.queue_bytes(1, 3), 0u);
  EXPECT_EQ(m.head_cell(1, 5), heads5[0]);
  EXPECT_THROW(m.dequeue(deq(1, 3)), std::logic_error);
}

// A drop changes nothing: no cells, no list entry, no ECN decision.
TEST(QueueManager, ADropTakesNoCellsAndDecidesNothing) {
  qm::Config c = config();
  c.mmu = base_config(2, kTotal, 4, kTotal);  // ingress pool of 4 cells, static at 4
  c.ecn[0].mode = ecn::MarkerConfig::Mode::threshold;
  c.ecn[0].unit = ecn::MarkerConfig::Unit::cells;
  c.ecn[0].k = 0;
  qm::QueueManager m(c);
  qm::EnqueueOp o = enq(0, 1, 0, 3);
  o.ecn_frame = true;
  o.ecn = ecn::codepoint::kEct0;
  ASSERT_TRUE(m.enqueue(o).admitted());
  const qm::EnqueueResult r = m.enqueue(o);  // 3 + 3 > 4: the pool has no room
  EXPECT_EQ(r.verdict, mmu::Verdict::drop_pool_full);
  EXPECT_EQ(r.head_cell, qm::kNoCell);
  EXPECT_FALSE(r.ecn.decided);
  EXPECT_EQ(m.free_cells(), kTotal - 3);
  EXPECT_EQ(m.queue_packets(1, 0), 1u);
  EXPECT_EQ(m.ecn_counters(1, 0).seen, 1u);
}

// ECN at enqueue sees the queue before the packet's own cells (q > K fires,
// q == K does not); at dequeue it sees what the packet leaves behind.
TEST(QueueManager, EcnSeesTheQueueWithoutThePacket) {
  qm::Config c = config();
  constexpr uint32_t K = 4;
  for (int q : {2, 3}) {
    c.ecn[q].mode = ecn::MarkerConfig::Mode::threshold;
    c.ecn[q].unit = ecn::MarkerConfig::Unit::cells;
    c.ecn[q].k = K;
  }
  c.ecn[3].point = ecn::MarkerConfig::Point::dequeue;
  qm::QueueManager m(c);
  // Enqueue point, 1-cell packets: the i-th (from 0) finds i cells.
  for (uint32_t i = 0; i < 7; ++i) {
    qm::EnqueueOp o = enq(0, 1, 2, 1);
    o.ecn_frame = true;
    o.ecn = ecn::codepoint::kEct0;
    const qm::EnqueueResult r = m.enqueue(o);
    EXPECT_TRUE(r.ecn.decided);
    EXPECT_EQ(r.ecn.fired, i > K) << i;
    EXPECT_EQ(r.ecn.mark, i > K) << i;
  }
  // Dequeue point, 2-cell packets: 6 queued (12 cells); the j-th dequeue
  // leaves 12 - 2(j+1) cells behind.
  for (uint32_t i = 0; i < 6; ++i) {
    qm::EnqueueOp o = enq(0, 1, 3, 2);
    o.ecn_frame = true;
    EXPECT_FALSE(m.enqueue(o).ecn.decided);  // not this queue's point
  }
  for (uint32_t j = 0; j < 6; ++j) {
    qm::DequeueOp o = deq(1, 3);
    o.ecn_frame = true;
    o.ecn = ecn::codepoint::kNotEct;
    const qm::DequeueResult d = m.dequeue(o);
    const uint32_t left = 12 - 2 * (j + 1);
    EXPECT_EQ(d.ecn.fired, left > K) << j;
    EXPECT_FALSE(d.ecn.mark) << "not-ECT is never marked";
  }
  // A discarded packet makes no decision; a frame the marker does not see neither.
  m.enqueue(enq(0, 1, 3, 1));
  qm::DequeueOp o = deq(1, 3);
  o.ecn_frame = true;
  o.discard = true;
  EXPECT_FALSE(m.dequeue(o).ecn.decided);
}

// ECN in bytes: the queue's byte counter before the packet's own bytes.
TEST(QueueManager, EcnInBytesUsesTheQueuesByteCounter) {
  qm::Config c = config();
  c.ecn[1].mode = ecn::MarkerConfig::Mode::threshold;
  c.ecn[1].k = 1000;
  qm::QueueManager m(c);
  const uint32_t sizes[] = {600, 400, 1, 1};  // finds 0, 600, 1000, 1001
  const bool fires[] = {false, false, false, true};
  for (int i = 0; i < 4; ++i) {
    qm::EnqueueOp o = enq(0, 1, 1, 3, sizes[i]);
    o.ecn_frame = true;
    o.ecn = ecn::codepoint::kEct1;
    EXPECT_EQ(m.enqueue(o).ecn.fired, fires[i]) << i;
  }
}

// WRED: the word of the op is used only in the ramp (Kmin < q <= Kmax), and
// the compare is r * (Kmax - Kmin) < (q - Kmin) * P32 (marker.h).
TEST(QueueManager, WredUsesTheOpsWordOnlyInTheRamp) {
  qm::Config c = config();
  ecn::MarkerConfig& w = c.ecn[4];
  w.mode = ecn::MarkerConfig::Mode::wred;
  w.unit = ecn::MarkerConfig::Unit::cells;
  w.kmin = 2;
  w.kmax = 6;
  w.pmax = 0.5;  // P32 = 2^31
  const uint64_t p32 = 1ull << 31;
  for (uint32_t q = 0; q < 9; ++q) {
    // The queue holds q cells; then one packet with word r.
    for (uint32_t r : {0u, 0x40000000u, 0xffffffffu}) {
      qm::QueueManager x(c);
      for (uint32_t i = 0; i < q; ++i) x.enqueue(enq(0, 1, 4, 1));
      qm::EnqueueOp o = enq(0, 1, 4, 1);
      o.ecn_frame = true;
      o.ecn = ecn::codepoint::kEct0;
      o.rand32 = r;
      const qm::EnqueueResult res = x.enqueue(o);
      const bool ramp = q > 2 && q <= 6;
      EXPECT_EQ(res.ecn.drew, ramp) << q;
      const bool want = q > 6 || (ramp && uint64_t(r) * (6 - 2) < uint64_t(q - 2) * p32);
      EXPECT_EQ(res.ecn.fired, want) << "q " << q << " r " << r;
    }
  }
}

// PFC: XOFF on the admit that takes the PG's shared use to the static XOFF
// level, XON (absolute rule) on the release that brings it to xon_cells, and
// the refresh tick re-evaluates an XOFF PG on its state now.
TEST(QueueManager, XoffOnAdmitXonOnReleaseAndTick) {
  qm::Config c = config();
  c.mmu = base_config(2, kTotal, 32, kTotal);  // room for the PG's 8 headroom cells
  mmu::PgProfile& g = c.mmu.ports[0].pgs[3];
  g.lossless = true;
  g.headroom_cells = 8;
  c.pfc_enabled = true;
  c.pfc_pgs = 1u << 3;
  c.pfc.dynamic_xoff = false;
  c.pfc.xoff_cells = 5;
  c.pfc.xon_rule = pfc::GeneratorConfig::XonRule::absolute;
  c.pfc.xon_cells = 2;
  qm::QueueManager m(c);
  EXPECT_EQ(m.pfc_tick(0, 3), qm::PfcAction::none);  // not XOFF: nothing
  // Shared use after the k-th 1-cell admit is k (no reserve): XOFF at 5.
  for (uint32_t k = 1; k <= 6; ++k) {
    qm::EnqueueOp o = enq(0, 1, 3, 1);
    o.lossless = true;
    const qm::EnqueueResult r = m.enqueue(o);
    EXPECT_TRUE(r.lossless);
    EXPECT_EQ(r.pfc, k == 5 ? qm::PfcAction::xoff : qm::PfcAction::none) << k;
  }
  EXPECT_TRUE(m.xoff(0, 3));
  // Still XOFF at 6, 5, 4, 3 left; XON when 2 are left (shared <= 2).
  for (uint32_t left = 5; left >= 2; --left) {
    const qm::DequeueResult d = m.dequeue(deq(1, 3));
    EXPECT_EQ(d.pg.shared, left);
    EXPECT_EQ(d.pfc, left == 2 ? qm::PfcAction::xon : qm::PfcAction::none) << left;
  }
  EXPECT_FALSE(m.xoff(0, 3));
  // Back to XOFF (shared 3, 4, 5); a tick while the XON rule does not hold
  // (5 > 2) sends nothing and leaves it XOFF.
  for (int k = 0; k < 3; ++k) {
    qm::EnqueueOp o = enq(0, 1, 3, 1);
    o.lossless = true;
    m.enqueue(o);
  }
  EXPECT_TRUE(m.xoff(0, 3));
  EXPECT_EQ(m.pfc_tick(0, 3), qm::PfcAction::none);
  EXPECT_TRUE(m.xoff(0, 3));
}

// The tick is what releases an XOFF PG whose dynamic threshold rose because
// other PGs drained (pfc.h): no operation of its own changes its state.
TEST(QueueManager, TickReleasesAPgWhoseThresholdRose) {
  qm::Config c = config();
  // Ingress pool of 16 cells, dynamic alpha 1 for PG 3 of port 0: T = 16 - used.
  c.mmu = base_config(2, kTotal, 16, kTotal);
  for (mmu::PortConfig& p : c.mmu.ports)
    for (mmu::PgProfile& g : p.pgs) g.threshold = mmu::test::dyn(0);
  c.mmu.ports[0].pgs[3].lossless = true;
  c.mmu.ports[0].pgs[3].headroom_cells = 8;
  c.pfc_enabled = true;
  c.pfc_pgs = 1u << 3;
  c.pfc.dynamic_xoff = true;
  c.pfc.xon_rule = pfc::GeneratorConfig::XonRule::offset;
  c.pfc.xon_offset_cells = 1;
  qm::QueueManager m(c);
  // Port 1 PG 0 (lossy) takes 6 cells: pool used 6.
  for (int k = 0; k < 6; ++k) ASSERT_TRUE(m.enqueue(enq(1, 0, 0, 1)).admitted());
  // PG (0,3): admitted while shared < T = 16 - 6 - shared; after k cells
  // shared = k, pool used = 6 + k, T = 10 - k: XOFF when k >= 10 - k, k = 5.
  qm::PfcAction last = qm::PfcAction::none;
  int k = 0;
  while (last != qm::PfcAction::xoff && k < 10) {
    qm::EnqueueOp o = enq(0, 1, 3, 1);
    o.lossless = true;
    last = m.enqueue(o).pfc;
    ++k;
  }
  EXPECT_EQ(k, 5);
  // XON needs shared + 1 < T. Now shared 5, T = 16 - 11 = 5: no.
  EXPECT_EQ(m.pfc_tick(0, 3), qm::PfcAction::none);
  // The lossy PG drains (its own operations; PG 3 untouched): T = 16 - 5 = 11.
  for (int j = 0; j < 6; ++j) m.dequeue(deq(0, 0));
  EXPECT_TRUE(m.xoff(0, 3));
  EXPECT_EQ(m.pfc_tick(0, 3), qm::PfcAction::xon);  // 5 + 1 < 11
  EXPECT_FALSE(m.xoff(0, 3));
}

namespace {

// The free list as the rule states it, kept here independently: a list
// initialised 0, 1, ..., total - 1; a packet takes its cells off the front;
// a freed chain goes back on the front whole, in chain order.
struct ReferenceFreeList {
  std::vector<uint32_t> list;  // front = back of the vector (so pops are cheap)
  explicit ReferenceFreeList(uint32_t total) {
    for (uint32_t c = total; c-- > 0;) list.push_back(c);
  }
  std::vector<uint32_t> take(uint32_t n) {
    std::vector<uint32_t> chain;
    for (uint32_t i = 0; i < n; ++i) {
      chain.push_back(list.back());
      list.pop_back();
    }
    return chain;
  }
  void give(const std::vector<uint32_t>& chain) {
    for (size_t i = chain.size(); i-- > 0;) list.push_back(chain[i]);
  }
  // The free list's link of each free cell: the next one in list order.
  uint32_t next_of_free(size_t pos_from_front) const {
    return pos_from_front + 1 < list.size() ? list[list.size() - 2 - pos_from_front] : qm::kNoCell;
  }
};

}  // namespace

// Over a random stream of enqueues (1..9 cells) and dequeues on several
// queues, every chain handed out is the reference list's (the LIFO list
// initialised 0, 1, 2, ...), every cell's next_cell() is its link in the
// reference (the chain's next for a cell in use, the list's next for a free
// one, never-used cells included), free_list_length() counts the reference
// list, and cells_touched() is the peak of cells in use at once: a cell c is
// handed out first only when 0 .. c-1 are all in use, so the highest cell
// ever handed out is that peak minus one.
TEST(QueueManager, AllocationOrderEqualsTheLifoListOverARandomStream) {
  constexpr uint32_t kCells = 4096;
  qm::Config c;
  c.mmu = base_config(4, kCells, kCells, kCells);
  for (mmu::PortConfig& p : c.mmu.ports)
    for (mmu::QueueProfile& qp : p.queues) qp.threshold = mmu::test::stat(kCells);  // admission never binds
  for (ecn::MarkerConfig& mc : c.ecn) mc.mode = ecn::MarkerConfig::Mode::off;
  qm::QueueManager m(c);
  ReferenceFreeList ref(kCells);
  std::vector<std::vector<std::vector<uint32_t>>> queues(4 * qm::kQueues);  // FIFO of chains per queue
  mmu::test::TestRng rng(12);
  auto rnd = [&](uint32_t n) { return static_cast<uint32_t>(rng.next() % n); };
  uint32_t in_use = 0, peak = 0, ops = 0;
  for (int step = 0; step < 20000; ++step) {
    uint32_t qi = rnd(static_cast<uint32_t>(queues.size()));
    uint16_t port = static_cast<uint16_t>(qi / qm::kQueues);
    uint8_t q = static_cast<uint8_t>(qi % qm::kQueues);
    // Grow while the buffer is light, then hover around half full (and now
    // and then drain), so freed and never-used cells interleave.
    const bool grow = in_use < kCells / 2 ? rnd(4) != 0 : rnd(2) == 0;
    if (grow) {
      const uint32_t n = 1 + rnd(9);
      if (in_use + n > kCells) continue;
      const qm::EnqueueResult r = m.enqueue(enq(static_cast<uint16_t>(rnd(4)), port, q, n));
      ASSERT_TRUE(r.admitted()) << step;
      const std::vector<uint32_t> want = ref.take(n);
      ASSERT_EQ(r.head_cell, want.front()) << step;
      std::vector<uint32_t> got;
      for (uint32_t x = r.head_cell; x != qm::kNoCell && got.size() <= n; x = m.next_cell(x)) got.push_back(x);
      ASSERT_EQ(got, want) << step;
      queues[qi].push_back(want);
      in_use += n;
      peak = std::max(peak, in_use);
    } else {
      if (in_use == 0) continue;
      uint32_t k = qi;  // the first non-empty queue from qi on
      while (queues[k].empty()) k = (k + 1) % static_cast<uint32_t>(queues.size());
      qi = k;
      port = static_cast<uint16_t>(qi / qm::kQueues);
      q = static_cast<uint8_t>(qi % qm::kQueues);
      const qm::DequeueResult d = m.dequeue(deq(port, q));
      ASSERT_EQ(d.head_cell, queues[qi].front().front()) << step;
      ASSERT_EQ(d.cells, queues[qi].front().size()) << step;
      ref.give(queues[qi].front());
      in_use -= d.cells;
      queues[qi].erase(queues[qi].begin());
    }
    ++ops;
    ASSERT_EQ(m.free_cells(), kCells - in_use) << step;
    ASSERT_EQ(m.cells_touched(), peak) << step;
    if (step % 997 == 0) {
      // Every cell's link, free or in use.
      ASSERT_EQ(m.free_list_length(), ref.list.size()) << step;
      for (size_t i = 0; i < ref.list.size(); ++i)
        ASSERT_EQ(m.next_cell(ref.list[ref.list.size() - 1 - i]), ref.next_of_free(i)) << step << " free #" << i;
      for (const auto& fifo : queues)
        for (const auto& ch : fifo)
          for (size_t i = 0; i < ch.size(); ++i)
            ASSERT_EQ(m.next_cell(ch[i]), i + 1 < ch.size() ? ch[i + 1] : qm::kNoCell) << step;
    }
  }
  EXPECT_GT(ops, 15000u);
  EXPECT_GT(peak, kCells / 2);     // the stream reached past half the buffer ...
  EXPECT_LT(peak, kCells);         // ... and never all of it: some cells stayed never used
}

// A never-used cell's link is the initialised list's, c + 1 (kNoCell for the
// last cell), before and after other cells were taken and freed.
TEST(QueueManager, NeverUsedCellsLinkInOrder) {
  qm::QueueManager m(config());
  EXPECT_EQ(m.next_cell(0), 1u);
  EXPECT_EQ(m.next_cell(kTotal - 2), kTotal - 1);
  EXPECT_EQ(m.next_cell(kTotal - 1), qm::kNoCell);
  EXPECT_EQ(m.cells_touched(), 0u);
  ASSERT_TRUE(m.enqueue(enq(0, 1, 0, 3)).admitted());  // cells 0, 1, 2
  m.dequeue(deq(1, 0));                               // list: 0, 1, 2, 3, 4, ...
  EXPECT_EQ(m.next_cell(2), 3u);                      // the freed chain leads to the first never-used cell
  EXPECT_EQ(m.next_cell(3), 4u);
  EXPECT_EQ(m.cells_touched(), 3u);
  EXPECT_EQ(m.free_list_length(), kTotal);
}

using testkit::resident_bytes;

// The per-cell state costs memory only where cells are used: a queue manager
// of 2^24 cells (a 4 GiB buffer of 256 B cells; 64 MiB of next-cell pointers
// if they were written at construction) becomes resident by far less than
// that, and using a few cells adds only the pages they touch.
TEST(QueueManager, MemoryUntouchedForUnusedCells) {
  constexpr uint32_t kHuge = 1u << 24;
  const long before = resident_bytes();
  ASSERT_GT(before, 0);
  qm::Config c;
  c.mmu = base_config(2, kHuge, kHuge, kHuge);
  for (ecn::MarkerConfig& mc : c.ecn) mc.mode = ecn::MarkerConfig::Mode::off;
  qm::QueueManager m(c);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(m.enqueue(enq(0, 1, 0, 17)).admitted());
  const long after = resident_bytes();
  // 4 bytes a cell for 1 700 cells is 2 pages; allow 4 MiB for the MMU's
  // per-port state and the allocator, against the 64 MiB an eager list writes.
  EXPECT_LT(after - before, 4l << 20) << "resident grew by " << (after - before) << " bytes";
  EXPECT_EQ(m.cells_touched(), 1700u);
  EXPECT_EQ(m.next_cell(kHuge - 1), qm::kNoCell);
}
