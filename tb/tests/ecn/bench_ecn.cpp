// Marker hot path: decide() per packet, in each mode, over a pre-generated
// trace of queue lengths (0 .. 500 KB, so WRED hits all three regions) and
// codepoints. items/s = decisions per second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/rng.h"
#include "ecn/marker.h"

namespace re = rocesim::ecn;

namespace {

void BM_Decide(benchmark::State& st) {
  re::MarkerConfig c;
  c.mode = static_cast<re::MarkerConfig::Mode>(st.range(0));
  c.k = 200000;
  c.kmin = 100000;
  c.kmax = 400000;
  c.pmax = 0.2;
  c.k_high = 300000;
  c.k_low = 150000;
  re::Marker m(c, rocesim::core::Rng(1, "sw0.eth0.q3"));
  const size_t kOps = 1 << 16;
  std::vector<uint64_t> q(kOps);
  std::vector<uint8_t> e(kOps);
  rocesim::core::Rng g(2, "trace");
  for (size_t i = 0; i < kOps; ++i) {
    q[i] = g.below(500000);
    e[i] = g.below(8) ? re::codepoint::kEct0 : re::codepoint::kNotEct;
  }
  size_t i = 0;
  for (auto _ : st) {
    const re::Decision d = m.decide(q[i], e[i]);
    benchmark::DoNotOptimize(d);
    i = (i + 1) & (kOps - 1);
  }
  st.SetItemsProcessed(int64_t(st.iterations()));
  st.SetLabel(re::mode_name(c.mode));
}
BENCHMARK(BM_Decide)->DenseRange(0, 3);

}  // namespace

BENCHMARK_MAIN();
