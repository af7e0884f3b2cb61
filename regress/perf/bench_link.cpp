// Frames per wall-second through encode (build + ICRC + FCS) -> MAC
// serialization -> cable -> MAC receive (parse with FCS and ICRC checks) ->
// sink. SystemC elaborates once per process, so the model is built once and
// every benchmark iteration advances simulated time by a fixed slice.
#include <benchmark/benchmark.h>

#include <memory>

#include <systemc>

#include "core/time.h"
#include "link/link.h"
#include "link/mac.h"
#include "packet/build.h"
#include "endpoint.h"
#include "frames.h"

using namespace rocesim;

namespace {

// Builds the next RoCEv2 WRITE frame: header bytes, ICRC, FCS.
struct Generator {
  link::Ledger* ledger = nullptr;
  uint32_t payload = 1024;
  uint32_t psn = 0;
  packet::Packet* operator()() { return testkit::roce_frame(*ledger, payload, psn++, packet::op::kWriteMiddle, true, 3); }
};

struct Model {
  packet::PacketPool pool;
  link::Ledger ledger{pool};
  Generator gen;
  std::unique_ptr<link::Mac> a, b;
  std::unique_ptr<link::Link> l;
  std::unique_ptr<testkit::Endpoint> src, sink;
  Model() {
    link::MacConfig mc;
    mc.rate_bps = 100000000000ull;
    link::LinkConfig lc;
    a = std::make_unique<link::Mac>("a", 0, mc, ledger);
    b = std::make_unique<link::Mac>("b", 0, mc, ledger);
    l = std::make_unique<link::Link>("cable", lc, ledger, 1);
    link::connect(*a, *l, *b);
    gen.ledger = &ledger;
    src = std::make_unique<testkit::Endpoint>("src", *a, ledger);
    sink = std::make_unique<testkit::Endpoint>("sink", *b, ledger);
    src->next = [this]() { return gen(); };
    sink->record = false;
    sc_core::sc_spawn([this] { a->kick(); });
  }
};

Model& model() {
  static Model m;
  return m;
}

void BM_EncodeLinkDecode(benchmark::State& state) {
  Model& m = model();
  m.gen.payload = static_cast<uint32_t>(state.range(0));
  const uint64_t before = m.sink->received;
  for (auto _ : state) sc_core::sc_start(core::ps(10000000));  // 10 us of simulated time per iteration
  const uint64_t frames = m.sink->received - before;
  state.SetItemsProcessed(static_cast<int64_t>(frames));
  state.counters["frames"] = static_cast<double>(frames);
  state.counters["pool_chunks"] = static_cast<double>(m.pool.chunks_allocated());
}
BENCHMARK(BM_EncodeLinkDecode)->Arg(64)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace

int sc_main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
