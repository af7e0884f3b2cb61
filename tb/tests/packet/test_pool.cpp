// PacketPool: chunked growth, free-list reuse, cheap reset.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "packet/build.h"
#include "packet/packet.h"
#include "packet/parse.h"
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
  EXPECT_EQ(q->meta, Meta{});
  EXPECT_EQ(q->frame_len(), kFcsBytes);
  EXPECT_EQ(q->hdr[0], first) << "reset leaves hdr[] alone (it is never read past hdr_len)";
  pool.release(q);
}

}  // namespace
}  // namespace rocesim::packet
