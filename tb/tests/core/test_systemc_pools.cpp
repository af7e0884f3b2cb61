// core::trim_systemc_temp_heap: libsystemc's load-time heap for sc_dt
// concatenation temporaries gives its memory back, and concatenations still
// compute the right values from the smaller heap.
#include <gtest/gtest.h>

#include <systemc>

#include "core/systemc_pools.h"
#include "resident.h"

namespace {

TEST(SystemcPools, TrimmingTheTempHeapGivesBackItsResidentPages) {
  const size_t before_len = sc_core::sc_temp_heap.length();
  const long before = testkit::resident_bytes();
  ASSERT_GT(before, 0);
  rocesim::core::trim_systemc_temp_heap();
  const long after = testkit::resident_bytes();
  EXPECT_EQ(sc_core::sc_temp_heap.length(), rocesim::core::kSystemcTempHeapBytes);
  // The library's heap is zero-filled at load, so all of it was resident; the
  // new one is resident too (zero-filled), the difference is given back.
  const long freed = static_cast<long>(before_len) - static_cast<long>(rocesim::core::kSystemcTempHeapBytes);
  ASSERT_GT(freed, 0) << "libsystemc's temp heap is no larger than the trimmed one";
  EXPECT_LE(after, before - freed * 9 / 10) << "before " << before << " B, after " << after << " B";
  // Idempotent: a second call keeps the heap as it is.
  char* const bgn = sc_core::sc_temp_heap.m_bgn_p;
  rocesim::core::trim_systemc_temp_heap();
  EXPECT_EQ(sc_core::sc_temp_heap.m_bgn_p, bgn);
}

TEST(SystemcPools, ConcatenationsStillComputeFromTheTrimmedHeap) {
  rocesim::core::trim_systemc_temp_heap();
  // 2 000 concatenations of two 160-bit values, more temporaries than the
  // trimmed heap holds at once, so its ring wraps: each result is checked
  // against its value computed from the parts' words.
  for (uint64_t i = 1; i <= 2000; ++i) {
    sc_dt::sc_biguint<160> hi = i * 0x9e3779b97f4a7c15ull, lo = ~i;
    hi <<= 64;
    hi += i;
    lo <<= 96;
    lo += i * 3;
    char* const next = sc_core::sc_temp_heap.m_next_p;
    const sc_dt::sc_biguint<320> cat = (hi, lo);
    ASSERT_NE(sc_core::sc_temp_heap.m_next_p, next) << "the concatenation took no temporaries from the heap";
    // Word by word: bits 0..159 are lo, 160..319 hi.
    for (int w = 0; w < 5; ++w) {
      const uint64_t want_lo = sc_dt::sc_biguint<32>(lo.range(32 * w + 31, 32 * w)).to_uint64();
      const uint64_t want_hi = sc_dt::sc_biguint<32>(hi.range(32 * w + 31, 32 * w)).to_uint64();
      ASSERT_EQ(sc_dt::sc_biguint<32>(cat.range(32 * w + 31, 32 * w)).to_uint64(), want_lo) << i << " word " << w;
      ASSERT_EQ(sc_dt::sc_biguint<32>(cat.range(160 + 32 * w + 31, 160 + 32 * w)).to_uint64(), want_hi)
          << i << " word " << w;
    }
  }
}

}  // namespace
