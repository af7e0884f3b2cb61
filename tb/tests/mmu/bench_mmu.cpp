// MMU hot path: one admit() plus one release() per iteration on a 64-port
// switch with a realistic mix (lossless PGs 3/4 with headroom, lossy PGs, DT
// egress queues), with a window of packets held in the buffer so the
// thresholds, pools and headroom are live. Iteration = release the oldest
// held packet (if it was admitted) + admit a new one.
//   incast 0, window 2048: traffic spread over all 64 egress ports (about
//     18k cells held), every packet admitted: items/s = admit+release pairs/s.
//   incast 1, window 8192: all traffic to 4 egress ports and more offered
//     than the buffer holds, so DT, pools and headroom bind and many packets
//     are dropped (a dropped packet needs no release).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "mmu/mmu.h"

namespace rm = rocesim::mmu;

namespace {

rm::Config bench_config(size_t ports) {
  rm::Config c;
  c.cell_bytes = 256;
  c.total_cells = 65536;  // 16 MiB of 256-B cells
  c.pools.push_back({"ingress_lossless_pool", rm::PoolType::ingress, 20000, rm::ThresholdMode::dynamic_th});
  c.pools.push_back({"ingress_lossy_pool", rm::PoolType::ingress, 30000, rm::ThresholdMode::dynamic_th});
  c.pools.push_back({"egress_lossless_pool", rm::PoolType::egress, 60000, rm::ThresholdMode::static_th});
  c.pools.push_back({"egress_lossy_pool", rm::PoolType::egress, 40000, rm::ThresholdMode::dynamic_th});
  c.ports.resize(ports);
  for (rm::PortConfig& p : c.ports) {
    for (unsigned g = 0; g < rm::kPgsPerPort; ++g) {
      rm::PgProfile& pg = p.pgs[g];
      const bool ll = g == 3 || g == 4;
      pg.pool = ll ? 0 : 1;
      pg.lossless = ll;
      pg.reserved_cells = ll ? 18 : 0;
      pg.threshold.dynamic_th = ll ? -4 : 0;
      pg.headroom_cells = ll ? 80 : 0;
    }
    for (unsigned q = 0; q < rm::kQueuesPerPort; ++q) {
      rm::QueueProfile& qp = p.queues[q];
      const bool ll = q == 3 || q == 4;
      qp.pool = ll ? 2 : 3;
      qp.threshold.static_cells = 60000;
      qp.threshold.dynamic_th = -4;
    }
  }
  return c;
}

void BM_AdmitRelease(benchmark::State& st) {
  const size_t ports = 64;
  rm::Mmu mmu(bench_config(ports));
  // A pseudo-random operation stream, generated up front so the loop
  // measures the MMU, not the generator.
  const size_t kOps = 1 << 16;
  std::vector<rm::AdmitOp> ops(kOps);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (rm::AdmitOp& o : ops) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    o.in_port = uint16_t(x % ports);
    o.out_port = uint16_t((x >> 8) % (st.range(0) == 0 ? ports : 4));
    o.pg = uint8_t((x >> 16) & 7);
    o.queue = o.pg;
    o.lossless = o.pg == 3 || o.pg == 4;
    o.cells = 1 + uint32_t((x >> 24) % 17);  // 64 B .. ~4 KiB packets
  }
  // Ring of packets held in the buffer: release the oldest, admit a new one.
  const size_t kWindow = size_t(st.range(1));  // a power of two
  std::vector<rm::ReleaseOp> ring(kWindow);
  std::vector<bool> live(kWindow, false);
  size_t head = 0, i = 0;
  uint64_t admitted = 0;
  for (auto _ : st) {
    if (live[head]) mmu.release(ring[head]);
    const rm::AdmitResult r = mmu.admit(ops[i]);
    live[head] = r.admitted();
    if (live[head]) {
      ring[head] = rm::ReleaseOp::of(r.charge);
      ++admitted;
    }
    head = (head + 1) & (kWindow - 1);
    i = (i + 1) & (kOps - 1);
    benchmark::DoNotOptimize(r);
  }
  st.SetItemsProcessed(st.iterations());
  st.counters["admit_ratio"] = double(admitted) / double(st.iterations());
  st.counters["drops"] = double(mmu.drops().total_packets());
  for (size_t v = 1; v < rm::kVerdicts; ++v) st.counters[rm::verdict_name(rm::Verdict(v))] = double(mmu.drops().packets[v]);
  st.counters["buffer_cells"] = double(mmu.total_used());
}
BENCHMARK(BM_AdmitRelease)->Args({0, 2048})->Args({1, 8192})->ArgNames({"incast", "window"});

}  // namespace

BENCHMARK_MAIN();
