// PacketPool: chunked growth, free-list reuse, cheap reset.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "packet/build.h"
#include "packet/packet.h"
#include "packet/parse.h"
#include "packet/wire.h"
#include "test_util.h"

namespace rocesim::packet {
namespace {

TEST(Pool, GrowsByOneChunkWhenEmpty) {
  PacketPool pool(4);
  EXPECT_EQ(pool.chunks_allocated(), 0u);
  std::set<Packet*> seen;
  for (int i = 0; i < 5; ++i) seen.insert(pool.acquire());
  EXPECT_EQ(seen.size(), 5u) << "distinct packets";
  EXPECT_EQ(pool.chunks_allocated(), 2u);
  EXPECT_EQ(pool.capacity(), 8u);
  EXPECT_EQ(pool.in_use(), 5u);
  for (Packet* p : seen) pool.release(p);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(Pool, ReuseAllocatesNoNewChunkAfterWarmUp) {
  PacketPool pool(16);
  std::vector<Packet*> live;
  for (int i = 0; i < 16; ++i) live.push_back(pool.acquire());
  for (Packet* p : live) pool.release(p);
  live.clear();
  ASSERT_EQ(pool.chunks_allocated(), 1u);
  uint32_t x = 1;
  for (int i = 0; i < 100000; ++i) {
    x = x * 1103515245u + 12345u;
    if (live.size() < 16 && ((x >> 16) & 1)) {
      live.push_back(pool.acquire());
    } else if (!live.empty()) {
      pool.release(live.back());
      live.pop_back();
    }
  }
  EXPECT_EQ(pool.chunks_allocated(), 1u);
  EXPECT_EQ(pool.capacity(), 16u);
  EXPECT_EQ(pool.in_use(), live.size());
}

TEST(Pool, AcquireResetsBookkeepingAndMetaButNotHeaderBytes) {
  PacketPool pool(1);
  Packet* p = pool.acquire();
  BthSpec b;
  build_roce(*p, test::eth_spec(true), test::ip_spec(), 1, b, nullptr, nullptr, 4000);
  p->id = 42, p->flow_id = 7, p->created_ps = 99, p->ingress_port = 3, p->prio = 5;
  p->path_dir = static_cast<uint8_t>(PathDir::rev), p->hops = 4, p->traced = 1;
  ASSERT_EQ(parse(*p), DropReason::none);
  const uint8_t first = p->hdr[0];
  pool.release(p);
  Packet* q = pool.acquire();
  ASSERT_EQ(q, p) << "single-packet pool hands the same storage back";
  EXPECT_EQ(q->hdr_len, 0);
  EXPECT_EQ(q->payload_len, 0u);
  EXPECT_EQ(q->trailer_len, 0);
  EXPECT_EQ(q->pad_len, 0);
  EXPECT_EQ(q->fcs, 0u);
  EXPECT_EQ(q->id, 0u);
  EXPECT_EQ(q->flow_id, 0u);
  EXPECT_EQ(q->created_ps, 0u);
  EXPECT_EQ(q->ingress_port, 0u);
  EXPECT_EQ(q->prio, 0);
  EXPECT_EQ(q->path_dir, 0) << "a reused frame is no flow's until its creator says so";
  EXPECT_EQ(q->hops, 0) << "a new frame has passed no switch";
  EXPECT_EQ(q->traced, 0) << "and is traced only when the tracer says so";
  EXPECT_EQ(q->meta, Meta{});
  EXPECT_EQ(q->frame_len(), kFcsBytes);
  EXPECT_EQ(q->hdr[0], first) << "reset leaves hdr[] alone (it is never read past hdr_len)";
  pool.release(q);
}

// Header storage (packet.h): a data frame's header lives inside the packet;
// a CM MAD (longer than kInlineHdr: Eth + VLAN + IPv4 + UDP + BTH + DETH +
// 256 B MAD = 322 B) grows it to kMaxHdr once, and the packet keeps that
// through the pool. Copies carry the bytes into their own storage (a copy
// pointing at its source's bytes would change with them).
TEST(Pool, HeadersLongerThanTheInlineStorageGrowItOnceAndCopiesOwnTheirBytes) {
  static_assert(sizeof(Packet) <= 420, "a packet in flight costs about 400 B (packet.h)");
  PacketPool pool(1);
  Packet* p = pool.acquire();
  BthSpec b;
  build_roce(*p, test::eth_spec(true), test::ip_spec(), 1, b, nullptr, nullptr, 4000);
  EXPECT_EQ(p->hdr_capacity(), Packet::kInlineHdr);
  build_cm(*p, test::eth_spec(true), test::ip_spec(), 0xC001, CmSpec{});
  using namespace wire;
  const size_t mad = kEthHdr + kVlanTag + kIpv4Hdr + kUdpHdr + kBth + 8 + 256;  // IBTA Vol 1 13.4 (MAD 256 B)
  ASSERT_EQ(p->hdr_len, mad);
  EXPECT_EQ(p->hdr_capacity(), Packet::kMaxHdr);
  ASSERT_EQ(parse(*p), DropReason::none);  // the MAD's bytes, ICRC and FCS as built
  const uint8_t* grown = p->hdr;

  // A copy owns its bytes, and parses the same.
  Packet c = *p;
  EXPECT_NE(c.hdr, p->hdr);
  ASSERT_EQ(c.hdr_len, p->hdr_len);
  EXPECT_EQ(std::vector<uint8_t>(c.hdr, c.hdr + c.hdr_len), std::vector<uint8_t>(p->hdr, p->hdr + p->hdr_len));
  p->hdr[mad - 1] ^= 0xff;  // the source changes; the copy does not
  EXPECT_EQ(parse(c), DropReason::none);
  EXPECT_EQ(c.meta.kind, FrameKind::cm);
  p->hdr[mad - 1] ^= 0xff;

  // Assigned into a packet with inline storage: it grows; a short frame then
  // assigned back keeps working in the grown storage.
  Packet small;
  build_roce(small, test::eth_spec(false), test::ip_spec(), 2, b, nullptr, nullptr, 100);
  const Packet small_copy = small;
  small = *p;
  EXPECT_EQ(small.hdr_capacity(), Packet::kMaxHdr);
  EXPECT_EQ(parse(small), DropReason::none);
  small = small_copy;
  EXPECT_EQ(parse(small), DropReason::none);
  EXPECT_EQ(small.meta.kind, FrameKind::roce);
  small = small;  // self-assignment leaves it as it was
  EXPECT_EQ(parse(small), DropReason::none);

  // Through the pool the grown storage stays: no allocation per frame.
  pool.release(p);
  Packet* q = pool.acquire();
  ASSERT_EQ(q, p);
  EXPECT_EQ(q->hdr, grown);
  build_cm(*q, test::eth_spec(true), test::ip_spec(), 0xC001, CmSpec{});
  EXPECT_EQ(q->hdr, grown);
  pool.release(q);

  // A hdr_len beyond the storage is a broken frame, not a read past it.
  Packet r;
  r.hdr_len = Packet::kInlineHdr + 1;
  r.pad_len = 60;
  EXPECT_EQ(parse(r), DropReason::truncated);
}

// The creator numbers a frame (link::Ledger::create sets id) before it
// builds it: every builder keeps that number, so a run's frames stay
// distinct (packet traces key on it), and clears the rest.
TEST(Pool, BuildersKeepTheCreatorsIdAndClearTheRest) {
  Packet p;
  const uint16_t timers[8] = {0, 0, 0, 0xffff, 0, 0, 0, 0};
  BthSpec b;
  const auto stamp = [](Packet& q, uint64_t id) {
    q.id = id, q.flow_id = 9, q.path_dir = static_cast<uint8_t>(PathDir::fwd), q.traced = 1;
  };
  stamp(p, 11);
  build_roce(p, test::eth_spec(true), test::ip_spec(), 1, b, nullptr, nullptr, 100);
  EXPECT_EQ(p.id, 11u);
  stamp(p, 12);
  build_cm(p, test::eth_spec(true), test::ip_spec(), 0xC001, CmSpec{});
  EXPECT_EQ(p.id, 12u);
  stamp(p, 13);
  build_pfc(p, 0x020000000001ull, 1u << 3, timers);
  EXPECT_EQ(p.id, 13u);
  stamp(p, 14);
  build_cnp(p, test::eth_spec(true), test::ip_spec(), 1, 0x11);
  EXPECT_EQ(p.id, 14u);
  EXPECT_EQ(p.flow_id, 0u) << "the flow is the creator's to set after building";
  EXPECT_EQ(p.path_dir, 0);
  EXPECT_EQ(p.traced, 0);
}

}  // namespace
}  // namespace rocesim::packet
