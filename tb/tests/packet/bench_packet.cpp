// Packet-layer hot paths: building a data frame (with ICRC and FCS over a
// payload held as a length), finalize() alone, and parsing with checks on.
#include <benchmark/benchmark.h>

#include <vector>

#include "packet/build.h"
#include "packet/crc.h"
#include "packet/parse.h"

namespace rp = rocesim::packet;

namespace {

rp::EthSpec eth() {
  rp::EthSpec e;
  e.dst = 0x021122334455ull;
  e.src = 0x02aabbccddeeull;
  e.vlan = true;
  e.pcp = 3;
  return e;
}

rp::Ipv4Spec ip() {
  rp::Ipv4Spec i;
  i.src = 0x0a000101;
  i.dst = 0x0a000202;
  i.dscp = 26;
  return i;
}

void BM_BuildRoce(benchmark::State& st) {
  const auto payload = uint32_t(st.range(0));
  rp::Packet p;
  rp::BthSpec b;
  b.opcode = rp::op::kWriteMiddle;
  b.dest_qp = 0x1234;
  uint32_t psn = 0;
  for (auto _ : st) {
    b.psn = psn++ & 0xffffff;
    rp::build_roce(p, eth(), ip(), 0xc000, b, nullptr, nullptr, payload);
    benchmark::DoNotOptimize(p.fcs);
  }
}
BENCHMARK(BM_BuildRoce)->Arg(1024)->Arg(4096);

void BM_Finalize(benchmark::State& st) {
  rp::Packet p;
  rp::BthSpec b;
  b.opcode = rp::op::kWriteMiddle;
  rp::build_roce(p, eth(), ip(), 0xc000, b, nullptr, nullptr, uint32_t(st.range(0)));
  for (auto _ : st) {
    ++p.hdr[p.meta.bth_offset + 11];  // new PSN each time, as a sender would
    rp::finalize(p);
    benchmark::DoNotOptimize(p.fcs);
  }
}
BENCHMARK(BM_Finalize)->Arg(1024)->Arg(4096);

void BM_Parse(benchmark::State& st) {
  rp::Packet p;
  rp::BthSpec b;
  b.opcode = rp::op::kWriteMiddle;
  rp::build_roce(p, eth(), ip(), 0xc000, b, nullptr, nullptr, uint32_t(st.range(0)));
  const rp::ParseOptions checks{true, true};
  for (auto _ : st) {
    auto r = rp::parse(p, checks);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Parse)->Arg(1024)->Arg(4096);

void BM_ParseNoChecks(benchmark::State& st) {
  rp::Packet p;
  rp::BthSpec b;
  b.opcode = rp::op::kWriteMiddle;
  rp::build_roce(p, eth(), ip(), 0xc000, b, nullptr, nullptr, 4096);
  const rp::ParseOptions none{false, false};
  for (auto _ : st) {
    auto r = rp::parse(p, none);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ParseNoChecks);

void BM_Crc32Zeros(benchmark::State& st) {
  const auto n = uint64_t(st.range(0));
  uint32_t reg = 0x12345678;
  for (auto _ : st) {
    reg = rp::crc32_zeros(reg, n) ^ 1;
    benchmark::DoNotOptimize(reg);
  }
}
BENCHMARK(BM_Crc32Zeros)->Arg(4096)->Arg(9000);

// Worst case: every call a new length, so the per-length cache always misses.
void BM_Crc32ZerosMiss(benchmark::State& st) {
  uint32_t reg = 0x12345678;
  uint64_t n = 100000;
  for (auto _ : st) {
    reg = rp::crc32_zeros(reg, n++) ^ 1;
    benchmark::DoNotOptimize(reg);
  }
}
BENCHMARK(BM_Crc32ZerosMiss);

void BM_Crc32Bytes(benchmark::State& st) {
  std::vector<uint8_t> buf(size_t(st.range(0)), 0x5a);
  for (auto _ : st) {
    auto c = rp::crc32(buf.data(), buf.size());
    benchmark::DoNotOptimize(c);
  }
  st.SetBytesProcessed(int64_t(st.iterations()) * st.range(0));
}
BENCHMARK(BM_Crc32Bytes)->Arg(64)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
