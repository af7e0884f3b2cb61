// core::Ring: a FIFO whose storage comes at the first push (initial size
// rounded up to a power of two), doubling when full, in order across wraps.
#include <gtest/gtest.h>

#include <deque>

#include "core/ring.h"

using rocesim::core::Ring;

TEST(Ring, NothingIsAllocatedBeforeTheFirstPush) {
  Ring<int> r(5);
  EXPECT_EQ(r.capacity(), 0u);
  EXPECT_TRUE(r.empty());
  r.clear();
  EXPECT_EQ(r.capacity(), 0u);
  r.push_back(7);
  EXPECT_EQ(r.capacity(), 8u) << "5 rounded up to a power of two";
  EXPECT_EQ(r.front(), 7);
  Ring<int> one(1);
  one.push_back(1);
  EXPECT_EQ(one.capacity(), 1u);
  one.push_back(2);
  EXPECT_EQ(one.capacity(), 2u);
  EXPECT_EQ(one.front(), 1);
  EXPECT_EQ(one.back(), 2);
}

// Against std::deque: pushes and pops interleaved so the ring wraps before
// each growth; the order, size and every element agree throughout, and the
// capacity only doubles.
TEST(Ring, StaysFifoAcrossWrapsAndGrowth) {
  Ring<int> r(4);
  std::deque<int> d;
  int next = 0;
  size_t cap = 0;
  for (int round = 0; round < 200; ++round) {
    const int pushes = 1 + round % 7, pops = round % 5;
    for (int i = 0; i < pushes; ++i) r.push_back(next), d.push_back(next), ++next;
    for (int i = 0; i < pops && !d.empty(); ++i) {
      ASSERT_EQ(r.front(), d.front()) << round;
      r.pop_front();
      d.pop_front();
    }
    ASSERT_EQ(r.size(), d.size());
    for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(r[i], d[i]) << round << " " << i;
    if (!d.empty()) {
      ASSERT_EQ(r.back(), d.back());
    }
    ASSERT_TRUE(r.capacity() == cap || r.capacity() == 2 * cap || cap == 0) << r.capacity() << " after " << cap;
    ASSERT_GE(r.capacity(), r.size());
    cap = r.capacity();
  }
  EXPECT_GT(cap, 4u) << "the ring grew";
}
