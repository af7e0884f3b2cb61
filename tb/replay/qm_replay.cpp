// qm_replay: drives the queue manager from an operation record written by
// `rocesim run --record-ops FILE` (format: tlm/qm/ops_file.h), without
// SystemC, and checks that every operation gives the recorded result.
//
//   qm_replay [--impl tlm|rtl] FILE
//                       exit 0: every decision agrees; 1: the first one that
//                       does not (line, time, switch, operation, field,
//                       expected, actual); 2: the file cannot be read or is
//                       malformed (FILE:LINE:COL), or the implementation
//                       cannot hold a switch's configuration.
//   --impl tlm (default): the C++ queue manager; --impl rtl: the Verilated
//   RTL (rtl/qm, when the tree was built with Verilator), within the
//   parameters it was built with (rtl::QmRtl).
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "qm/ops_file.h"
#include "qm/queue_manager.h"
#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif

using namespace rocesim;

namespace {

const char* kind_name(qm::OpKind k) {
  return k == qm::OpKind::enqueue ? "enqueue" : k == qm::OpKind::dequeue ? "dequeue" : "pfc_tick";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: qm_replay [--impl tlm|rtl] FILE\n"
                 "Replays a queue-manager operation record (rocesim run --record-ops FILE) on the C++ queue\n"
                 "manager (tlm, the default) or the Verilated RTL (rtl) and checks every result.\n"
                 "Exit 0: all agree; 1: a decision differs; 2: bad input.\n";
    return 0;
  }
  std::string impl = "tlm";
  if (args.size() == 3 && args[0] == "--impl") {
    impl = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.size() != 1 || (impl != "tlm" && impl != "rtl")) {
    std::cerr << "qm_replay: usage: qm_replay [--impl tlm|rtl] FILE (--help for more)\n";
    return 2;
  }
#if !ROCESIM_HAVE_RTL
  if (impl == "rtl") {
    std::cerr << "qm_replay: --impl rtl: this build has no RTL model (Verilator was not found)\n";
    return 2;
  }
#endif
  const std::string path = args[0];
  qm::OpsFile f;
  try {
    f = qm::read_ops_file(path);
  } catch (const std::exception& e) {
    std::cerr << "qm_replay: " << e.what() << "\n";
    return 2;
  }
  std::vector<std::unique_ptr<qm::QueueManagerIf>> models;
  for (const qm::OpsFile::Switch& s : f.switches) {
    try {
#if ROCESIM_HAVE_RTL
      if (impl == "rtl") {
        models.push_back(std::make_unique<rtl::QmRtl>(s.config));
        continue;
      }
#endif
      models.push_back(std::make_unique<qm::QueueManager>(s.config));
    } catch (const std::exception& e) {
      std::cerr << "qm_replay: " << path << ": switch " << s.name << ": " << impl
                << " cannot hold the configuration: " << e.what() << "\n";
      return 2;
    }
  }
  uint64_t counts[3] = {};
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const qm::OpRecord& want = f.ops[i];
    qm::QueueManagerIf& m = *models[want.sw];
    qm::OpRecord got = want;
    auto where = [&] {
      return path + ":" + std::to_string(f.op_lines[i]) + ": " + kind_name(want.kind) + " at " +
             std::to_string(want.t_ps) + " ps on " + f.switches[want.sw].name;
    };
    try {
      if (want.kind == qm::OpKind::enqueue) got.enq_r = m.enqueue(want.enq);
      else if (want.kind == qm::OpKind::dequeue) got.deq_r = m.dequeue(want.deq);
      else got.tick_r = m.pfc_tick(want.tick_port, want.tick_pg);
    } catch (const std::exception& e) {
      std::cerr << "qm_replay: " << where() << ": the model refuses the operation: " << e.what() << "\n";
      return 1;
    }
    std::string diff;
    if (!qm::same_result(want, got, diff)) {
      std::cerr << "qm_replay: " << where() << ": " << diff << "\n  recorded: " << qm::op_text(want)
                << "  replayed: " << qm::op_text(got);
      return 1;
    }
    ++counts[static_cast<int>(want.kind)];
  }
  std::cout << "qm_replay: " << path << " (" << impl << "): " << f.ops.size() << " operations on " << f.switches.size()
            << " switches (" << counts[0] << " enqueue, " << counts[1] << " dequeue, " << counts[2]
            << " pfc_tick): every decision agrees\n";
  return 0;
}
