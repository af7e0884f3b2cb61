// Scheduler hot path: one pick() + sent() per iteration on one port, i.e. the
// work the switch does per transmitted frame.
//   BM_DwrrMix: queues 6, 7 strict (light traffic), 0-5 DWRR saturated with
//     frames of 64..4096 B; no shapers.
//   BM_Shaped: the same with a shaper on every DWRR queue and on the port;
//     a failed pick is followed by next_eligible_ps() (the caller's wake-up).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "sched/scheduler.h"

namespace rs = rocesim::sched;

namespace {

rs::PortConfig bench_config(bool shaped) {
  rs::PortConfig p = rs::PortConfig::roce_default();
  p.max_frame_bytes = 4096;
  rs::set_dwrr_weights(p, {1, 2, 3, 4, 5, 6, 0, 0}, 4096);
  if (shaped) {
    for (unsigned q = 0; q < 6; ++q) p.queues[q].shaper = {(q + 1) * 10'000'000'000ull, 16384};
    p.shaper = {90'000'000'000ull, 16384};
  }
  return p;
}

// xorshift64: cheap frame sizes, fixed seed.
struct Sizes {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return 64 + static_cast<uint32_t>(s % 4033);
  }
};

void run(benchmark::State& state, bool shaped) {
  rs::Scheduler s(bench_config(shaped));
  Sizes sz;
  rs::Heads h{};
  for (unsigned q = 0; q < 6; ++q) h[q] = sz.next();
  uint64_t now = 0, n = 0;
  for (auto _ : state) {
    // Light strict traffic: one frame on 6 or 7 every 16 frames.
    if ((++n & 15) == 0) h[6 + (n >> 4 & 1)] = 128;
    int c = s.pick(h, 0, now);
    if (c < 0) {
      now = s.next_eligible_ps(h, 0, now);
      c = s.pick(h, 0, now);
    }
    s.sent(c, h[c], now);
    now += h[c] * 80ull;  // 100 Gbps
    h[c] = c < 6 ? sz.next() : 0;
  }
  benchmark::DoNotOptimize(s.port_counters().bytes);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_DwrrMix(benchmark::State& state) { run(state, false); }
void BM_Shaped(benchmark::State& state) { run(state, true); }

}  // namespace

BENCHMARK(BM_DwrrMix);
BENCHMARK(BM_Shaped);
BENCHMARK_MAIN();
