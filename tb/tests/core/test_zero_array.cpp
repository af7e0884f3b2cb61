// core::ZeroArray: elements start zero, and only the pages written become
// resident, also after the allocator's mmap threshold has risen.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include <unistd.h>

#include "core/zero_array.h"
#include "resident.h"

namespace {

using rocesim::core::ZeroArray;

const long kPage = sysconf(_SC_PAGESIZE);

TEST(ZeroArray, StartsZeroAndOnlyWrittenPagesBecomeResident) {
  constexpr size_t kN = size_t(64) << 20 >> 2;  // 64 MiB of uint32_t
  const long r0 = testkit::resident_bytes();
  ZeroArray<uint32_t> a(kN);
  ASSERT_EQ(a.size(), kN);
  EXPECT_TRUE(a.mapped());
  const long r1 = testkit::resident_bytes();
  EXPECT_LT(r1 - r0, 1 << 20) << "construction made the array resident";
  // 16 writes, 4 MiB apart: 16 pages.
  for (size_t i = 0; i < 16; ++i) a[i * (kN / 16)] = static_cast<uint32_t>(i + 1);
  const long r2 = testkit::resident_bytes();
  EXPECT_LE(r2 - r1, 16 * kPage + (256 << 10));
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(a[i * (kN / 16)], i + 1);
  EXPECT_EQ(a[1], 0u);
  EXPECT_EQ(a[kN - 1], 0u);
}

TEST(ZeroArray, StaysLazyAfterTheMmapThresholdRose) {
  // glibc raises its mmap threshold to the size of a mapped block freed; a
  // calloc below it then comes from the heap and is cleared there.
  void* big = std::malloc(size_t(24) << 20);
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, 4096);
  std::free(big);
  const long r0 = testkit::resident_bytes();
  ZeroArray<uint64_t> a(size_t(16) << 20 >> 3);  // 16 MiB
  a[7] = 1;
  const long r1 = testkit::resident_bytes();
  EXPECT_LT(r1 - r0, 1 << 20) << "16 MiB array made resident: " << (r1 - r0) << " B";
  EXPECT_EQ(a[7], 1u);
  EXPECT_EQ(a[a.size() - 1], 0u);
}

TEST(ZeroArray, SmallArraysAndMovesKeepTheirElements) {
  ZeroArray<uint32_t> s(100);
  EXPECT_FALSE(s.mapped());
  for (size_t i = 0; i < 100; ++i) EXPECT_EQ(s[i], 0u);
  s[99] = 5;
  ZeroArray<uint32_t> m(std::move(s));
  EXPECT_EQ(m.size(), 100u);
  EXPECT_EQ(m[99], 5u);
  EXPECT_EQ(s.size(), 0u);
  ZeroArray<uint32_t> big(1 << 20);
  big[3] = 9;
  m = std::move(big);
  EXPECT_EQ(m.size(), size_t(1) << 20);
  EXPECT_TRUE(m.mapped());
  EXPECT_EQ(m[3], 9u);
  ZeroArray<uint32_t> e;
  EXPECT_EQ(e.size(), 0u);
  EXPECT_FALSE(e.mapped());
}

}  // namespace
