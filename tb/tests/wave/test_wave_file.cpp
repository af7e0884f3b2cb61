// trace::Recorder and the FST/VCD writers: a few signals changed out of
// time order, read back with fst2vcd (GTKWave's own FST reader) and with the
// VCD reader, against the changes the recorder's rules give by hand
// (trace/recorder.h: time order, the last change of a time wins, no repeated
// values, the window).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "trace/recorder.h"
#include "vcd_read.h"
#include "wave/wave_file.h"

namespace {

using Changes = std::vector<std::pair<uint64_t, uint64_t>>;

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string tmpdir() {
  char t[] = "/tmp/rocesim-wave-XXXXXX";
  return mkdtemp(t);
}

// Writes the same changes through a recorder into `path` and returns the VCD text.
std::string record(const std::string& path, rocesim::wave::Format fmt, uint64_t from, uint64_t to) {
  uint64_t now = 0;
  rocesim::trace::Recorder r([&] { return now; }, from, to);
  const auto depth = r.add_signal({{"sw0", "p1", "q3"}, "depth_bytes [31:0]", 32, true});
  const auto flag = r.add_signal({{"sw0", "p1"}, "busy", 1, false});
  const auto count = r.add_signal({{"sw0", "mmu"}, "drops [63:0]", 64, false});
  std::string why;
  auto f = rocesim::wave::open_wave(path, fmt, "test", why);
  EXPECT_TRUE(f) << why;
  if (!f) return "";
  r.open(f.get());
  r.set(depth, 100, 5);  // ahead of now (an early hand-off)
  r.set(flag, 10, 1);
  r.add(count, 10);
  r.add(count, 10);
  r.set(depth, 50, 3);
  r.set(depth, 50, 4);   // the same time: the last change wins
  r.set(flag, 20, 1);    // no change: not written
  r.set(flag, 30, 0);
  r.add(count, 70, 0x100000000ull);  // a 64-bit counter
  now = 120;
  r.set(flag, 120, 1);
  r.close(200);
  EXPECT_EQ(r.late(), 0u);
  EXPECT_TRUE(f->close(why)) << why;
  EXPECT_FALSE(std::ifstream(path + ".partial").good()) << "the .partial is renamed";
  if (fmt == rocesim::wave::Format::vcd) return slurp(path);
  const std::string vcd = path + ".vcd";
  EXPECT_EQ(std::system(("fst2vcd " + path + " > " + vcd + " 2>/dev/null").c_str()), 0);
  return slurp(vcd);
}

void expect_full(const wavetest::Vcd& v) {
  ASSERT_TRUE(v.error.empty()) << v.error;
  EXPECT_EQ(v.timescale, "1ps");
  EXPECT_EQ(v.bits_of.at("sw0.p1.q3.depth_bytes"), 32u);
  EXPECT_EQ(v.bits_of.at("sw0.p1.busy"), 1u);
  // By hand from the calls above: every signal 0 at 0, then in time order.
  EXPECT_EQ(v.of("sw0.p1.q3.depth_bytes"), (Changes{{0, 0}, {50, 4}, {100, 5}}));
  EXPECT_EQ(v.of("sw0.p1.busy"), (Changes{{0, 0}, {10, 1}, {30, 0}, {120, 1}}));
  EXPECT_EQ(v.of("sw0.mmu.drops"), (Changes{{0, 0}, {10, 2}, {70, 0x100000002ull}}));
  ASSERT_FALSE(v.times.empty());
  EXPECT_EQ(v.times.back(), 200u) << "the file extends to the end";
  for (size_t i = 1; i < v.times.size(); ++i) EXPECT_LT(v.times[i - 1], v.times[i]);
}

TEST(WaveFile, FstReadBackWithFst2vcd) {
  const std::string d = tmpdir();
  expect_full(wavetest::parse_vcd(record(d + "/t.fst", rocesim::wave::Format::fst, 0, UINT64_MAX)));
  std::system(("rm -rf " + d).c_str());
}

TEST(WaveFile, VcdSameChanges) {
  const std::string d = tmpdir();
  expect_full(wavetest::parse_vcd(record(d + "/t.vcd", rocesim::wave::Format::vcd, 0, UINT64_MAX)));
  std::system(("rm -rf " + d).c_str());
}

TEST(WaveFile, WindowKeepsItsValuesOnly) {
  const std::string d = tmpdir();
  for (auto fmt : {rocesim::wave::Format::fst, rocesim::wave::Format::vcd}) {
    const std::string p = d + (fmt == rocesim::wave::Format::fst ? "/w.fst" : "/w.vcd");
    const wavetest::Vcd v = wavetest::parse_vcd(record(p, fmt, 40, 90));
    ASSERT_TRUE(v.error.empty()) << v.error;
    // At 40 every signal's value then (changes before 40 applied), then the window's changes; none after 90.
    EXPECT_EQ(v.of("sw0.p1.q3.depth_bytes"), (Changes{{40, 0}, {50, 4}}));
    EXPECT_EQ(v.of("sw0.p1.busy"), (Changes{{40, 0}}));
    EXPECT_EQ(v.of("sw0.mmu.drops"), (Changes{{40, 2}, {70, 0x100000002ull}}));
    ASSERT_FALSE(v.times.empty());
    EXPECT_EQ(v.times.front(), 40u);
    EXPECT_EQ(v.times.back(), 90u);
  }
  std::system(("rm -rf " + d).c_str());
}

// More changes than one flush holds, each recorded up to 3 ps ahead of a
// clock that advances: the file is in time order and holds every change.
TEST(WaveFile, FlushesInTimeOrder) {
  const std::string d = tmpdir();
  const std::string p = d + "/big.vcd";
  uint64_t now = 0;
  rocesim::trace::Recorder r([&] { return now; });
  const auto s = r.add_signal({{"x"}, "v [31:0]", 32, true});
  std::string why;
  auto f = rocesim::wave::open_wave(p, rocesim::wave::Format::vcd, "test", why);
  ASSERT_TRUE(f) << why;
  r.open(f.get());
  const uint64_t n = 3 * rocesim::trace::Recorder::kFlushRecords;
  for (uint64_t i = 1; i <= n; ++i) {
    now = 10 * i;
    r.set(s, now + 3, i);  // ahead of now, as an early hand-off
  }
  r.close(10 * n + 3);
  ASSERT_TRUE(f->close(why)) << why;
  const wavetest::Vcd v = wavetest::parse_vcd(slurp(p));
  const auto& c = v.of("x.v");
  ASSERT_EQ(c.size(), n + 1);  // the initial 0, then each change
  for (uint64_t i = 1; i <= n; ++i) ASSERT_EQ(c[i], std::make_pair(10 * i + 3, i)) << i;
  EXPECT_EQ(r.late(), 0u);
  std::system(("rm -rf " + d).c_str());
}

TEST(WaveFile, FormatFromName) {
  rocesim::wave::Format f;
  EXPECT_TRUE(rocesim::wave::format_of("a/wave.fst", f));
  EXPECT_EQ(f, rocesim::wave::Format::fst);
  EXPECT_TRUE(rocesim::wave::format_of("wave.vcd", f));
  EXPECT_EQ(f, rocesim::wave::Format::vcd);
  EXPECT_FALSE(rocesim::wave::format_of("wave.txt", f));
  EXPECT_FALSE(rocesim::wave::format_of(".fst", f));
}

}  // namespace
