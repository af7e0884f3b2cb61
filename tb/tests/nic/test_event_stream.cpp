// pfc.csv / cc.csv streaming (sim/outputs.h EventCsvStream): rows flushed
// slice by slice, some logged ahead of their time, give the file a single
// sort at the end would give: every row once, in time order, rows of equal
// time in the order they were logged. The expected text is formatted here
// from the documented row format (docs/outputs.md), not by the code under test.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "sim/outputs.h"

using namespace rocesim;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// "time_ns,node,port,priority,event": the time in ns with 3 decimals.
std::string row(const pfc::Event& e) {
  char b[160];
  std::snprintf(b, sizeof b, "%" PRIu64 ".%03" PRIu64 ",%s,%u,%u,%s\n", e.t_ps / 1000, e.t_ps % 1000, e.node, e.port,
                unsigned(e.prio), e.what);
  return b;
}

}  // namespace

TEST(EventCsvStream, SlicesGiveTheRowsInTimeOrderWithEqualTimesInLogOrder) {
  const std::string path = ::testing::TempDir() + "/pfc_stream_" + std::to_string(::getpid()) + ".csv";
  sim::EventCsvStream st;
  std::string why;
  ASSERT_TRUE(st.open(path, sim::kPfcCsvHeader, why)) << why;
  static const char* kNodes[] = {"sw0", "sw1", "h3"};
  std::vector<pfc::Event> log, all;  // all: every row in the order it was logged
  // 50 slices of 1000 ps. In slice k producers log rows at times within the
  // slice, several at equal times, out of order within the slice, and one
  // row 1500 ps ahead (a MAC's early pause transition).
  uint32_t n = 0;
  for (uint64_t k = 0; k < 50; ++k) {
    const uint64_t t0 = k * 1000;
    const uint64_t times[] = {t0 + 700, t0 + 200, t0 + 200, t0 + 999, t0, t0 + 200, t0 + 2500};
    for (uint64_t t : times) {
      pfc::Event e{t, kNodes[n % 3], n, static_cast<uint8_t>(n % 8), n % 2 ? "xoff" : "pause_end"};
      ++n;
      log.push_back(e);
      all.push_back(e);
    }
    st.flush(log, t0 + 1000);
    for (const pfc::Event& e : log) EXPECT_GE(e.t_ps, t0 + 1000) << "rows before the horizon leave memory";
    EXPECT_LE(log.size(), 3u) << "memory holds the rows ahead, not the run";
  }
  std::vector<sim::OutputFailure> failed;
  st.close(log, failed);
  EXPECT_TRUE(failed.empty());
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(st.late(), 0u);
  // Expected: stable by time over the whole log (insertion order breaks ties).
  std::vector<size_t> idx(all.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return all[a].t_ps < all[b].t_ps; });
  std::string want = "time_ns,node,port,priority,event\n";
  for (size_t i : idx) want += row(all[i]);
  EXPECT_EQ(slurp(path), want);
  EXPECT_EQ(slurp(path), sim::event_csv(all, sim::kPfcCsvHeader)) << "the same bytes as the in-memory log";
  std::remove(path.c_str());
}

TEST(EventCsvStream, ARowBehindTheWrittenHorizonIsWrittenLateAndCounted) {
  const std::string path = ::testing::TempDir() + "/pfc_late_" + std::to_string(::getpid()) + ".csv";
  sim::EventCsvStream st;
  std::string why;
  ASSERT_TRUE(st.open(path, sim::kPfcCsvHeader, why)) << why;
  std::vector<pfc::Event> log{{5000, "sw0", 1, 3, "xoff"}};
  st.flush(log, 10000);
  log.push_back({7000, "sw0", 1, 3, "xon"});  // behind 10000: a producer's bug
  st.flush(log, 20000);
  std::vector<sim::OutputFailure> failed;
  st.close(log, failed);
  EXPECT_EQ(st.late(), 1u);
  EXPECT_EQ(slurp(path), "time_ns,node,port,priority,event\n5.000,sw0,1,3,xoff\n7.000,sw0,1,3,xon\n");
  std::remove(path.c_str());
}

TEST(EventCsvStream, AnUnwritableDirectoryFailsAtOpenNamingTheFile) {
  sim::EventCsvStream st;
  std::string why;
  EXPECT_FALSE(st.open("/nonexistent-dir/pfc.csv", sim::kPfcCsvHeader, why));
  EXPECT_NE(why.find("/nonexistent-dir/pfc.csv"), std::string::npos) << why;
}
