// libFuzzer target: queue-manager operation records (tlm/qm/ops_file.h, the
// file `rocesim run --record-ops` writes and qm_replay reads).
//
// Contract: a malformed file throws std::runtime_error whose message starts
// with the file name (FILE:LINE:COL). An accepted file written back
// (config_text, op_text) reads back to the same text (a fixed point), and
// replaying its operations on the queue manager never crashes: an operation
// the model refuses (a dequeue of an empty queue, an index out of range)
// throws std::logic_error or std::invalid_argument, nothing else.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "qm/ops_file.h"
#include "qm/queue_manager.h"

namespace {

[[noreturn]] void finding(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_ops: %s %s\n", what, detail.c_str());
  std::abort();
}

std::string write_back(const rocesim::qm::OpsFile& f) {
  std::string w = "rocesim-qm-ops 1\n";
  for (size_t i = 0; i < f.switches.size(); ++i)
    w += rocesim::qm::config_text(static_cast<uint32_t>(i), f.switches[i].name, f.switches[i].config);
  for (const rocesim::qm::OpRecord& r : f.ops) w += rocesim::qm::op_text(r);
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rocesim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  qm::OpsFile f;
  try {
    f = qm::parse_ops(text, "fuzz.ops");
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind("fuzz.ops", 0) != 0) finding("error without the file name:", e.what());
    return 0;
  }
  const std::string w1 = write_back(f);
  std::string w2;
  try {
    w2 = write_back(qm::parse_ops(w1, "written.ops"));
  } catch (const std::runtime_error& e) {
    finding("written file not read back:", e.what());
  }
  if (w1 != w2) finding("write then read changed the record");
  // Replay, on switches small enough for the fuzzer's memory limit.
  std::vector<std::unique_ptr<qm::QueueManager>> models;
  for (const qm::OpsFile::Switch& s : f.switches) {
    if (s.config.mmu.total_cells > (1u << 16) || s.config.mmu.ports.size() > 64) return 0;
    try {
      models.push_back(std::make_unique<qm::QueueManager>(s.config));
    } catch (const std::invalid_argument&) {
      return 0;  // an invalid configuration is refused
    }
  }
  for (const qm::OpRecord& r : f.ops) {
    qm::QueueManager& m = *models[r.sw];
    try {
      if (r.kind == qm::OpKind::enqueue) (void)m.enqueue(r.enq);
      else if (r.kind == qm::OpKind::dequeue) (void)m.dequeue(r.deq);
      else (void)m.pfc_tick(r.tick_port, r.tick_pg);
    } catch (const std::logic_error&) {
      // refused: std::invalid_argument and std::logic_error (its base)
    }
  }
  return 0;
}
