// rocesim command line: `rocesim run` and `rocesim validate`.
// Exit status: 0 ok, 2 bad input (config, arguments, output path), 1 simulation failure.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "core/config.h"
#include "sim/budget.h"
#include "sim/capture.h"
#include "sim/fabric.h"
#include "sim/outputs.h"
#include "sim/scenario.h"

namespace {

using namespace rocesim;

constexpr int kOk = 0, kFail = 1, kBadInput = 2;

const char* kMainHelp =
    "rocesim " ROCESIM_VERSION " - cycle-approximate model of a RoCEv2 switch fabric\n"
    "\n"
    "usage: rocesim run CONFIG.yaml --out DIR [--seed N] [--set key.path=value ...] [--pcap NODE:PORT ...]\n"
    "       rocesim validate CONFIG.yaml [--set key.path=value ...]\n"
    "       rocesim --help | --version\n"
    "\n"
    "Run 'rocesim run --help' or 'rocesim validate --help' for details.\n"
    "Exit status: 0 ok, 2 bad input, 1 simulation failure.\n";

const char* kRunHelp =
    "usage: rocesim run CONFIG.yaml --out DIR [options]\n"
    "\n"
    "Runs the scenario and writes into DIR:\n"
    "  config.resolved.yaml  the effective configuration (defaults and overrides applied)\n"
    "  summary.json          run totals (schema: docs/outputs.md)\n"
    "  flows.csv             one row per flow (FCT, ideal FCT, slowdown, retransmissions, CNPs)\n"
    "  pfc.csv               every XOFF/XON, pause start/end and watchdog event\n"
    "  flows.hpcc.txt        the flows in HPCC's flow-file format\n"
    "  queues.csv            switch queue time series (with switches and stats.interval)\n"
    "  flow_series.csv       per-flow throughput time series (stats.flow_series)\n"
    "  cc.csv                DCQCN rate/target/alpha changes (hosts.cc: dcqcn)\n"
    "  pcap/NODE-pPORT-{rx,tx}.pcap  captures asked for with --pcap\n"
    "\n"
    "options:\n"
    "  --out DIR             output directory (created; existing files are replaced)\n"
    "  --seed N              random seed (overrides the config's 'seed')\n"
    "  --set key.path=value  override a config value, e.g. --set links.rate=25Gbps (repeatable)\n"
    "  --pcap NODE:PORT      capture both directions of a port, e.g. --pcap h1:0 (repeatable)\n"
    "  --pcap NODE:*         capture every port of a node, e.g. --pcap leaf0:*\n"
    "  --pcap-snaplen N      keep the first N bytes (1..65535) of each captured frame, or 'headers'\n"
    "                        for the headers only (no payload)\n"
    "  --quiet               print nothing but errors\n"
    "\n"
    "Bad input is reported as FILE:LINE:COL: key 'PATH': reason and exits 2 before any output is written.\n"
    "So is a run whose estimated memory or output exceeds sim.max_memory or sim.max_output.\n";

const char* kValidateHelp =
    "usage: rocesim validate CONFIG.yaml [--set key.path=value ...] [--pcap NODE:PORT ...] [--pcap-snaplen N]\n"
    "\n"
    "Reads the configuration, applies overrides, checks every key and value and the topology,\n"
    "estimates the run's memory and output (checked against sim.max_memory and sim.max_output)\n"
    "and prints the effective configuration with the estimate. Builds no model and writes nothing.\n"
    "Exit 0 if valid, 2 if not.\n";

struct Args {
  std::string cmd, config, out;
  bool has_seed = false;
  uint64_t seed = 0;
  std::vector<std::string> sets, pcaps;
  uint32_t snaplen = sim::kSnapFull;  // --pcap-snaplen
  bool quiet = false, help = false;
};

int usage_error(const std::string& msg, const char* help) {
  std::cerr << "rocesim: " << msg << "\n\n" << help;
  return kBadInput;
}

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

// Returns -1 when parsing succeeded, else the exit status.
int parse_args(int argc, char** argv, Args& a) {
  if (argc < 2) return usage_error("missing command", kMainHelp);
  a.cmd = argv[1];
  if (a.cmd == "--help" || a.cmd == "-h" || a.cmd == "help") {
    std::cout << kMainHelp;
    return kOk;
  }
  if (a.cmd == "--version") {
    std::cout << "rocesim " ROCESIM_VERSION "\n";
    return kOk;
  }
  if (a.cmd != "run" && a.cmd != "validate") return usage_error("unknown command '" + a.cmd + "'", kMainHelp);
  const char* help = a.cmd == "run" ? kRunHelp : kValidateHelp;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << help;
      a.help = true;
      return kOk;
    } else if (arg == "--set") {
      std::string v;
      if (!value(v)) return usage_error("--set needs key.path=value", help);
      a.sets.push_back(v);
    } else if (arg.rfind("--set=", 0) == 0) {
      a.sets.push_back(arg.substr(6));
    } else if (a.cmd == "run" && arg == "--out") {
      if (!value(a.out)) return usage_error("--out needs a directory", help);
    } else if (a.cmd == "run" && arg == "--seed") {
      std::string v;
      if (!value(v) || !parse_u64(v, a.seed) || a.seed > static_cast<uint64_t>(INT64_MAX))
        return usage_error("--seed needs a non-negative integer", help);
      a.has_seed = true;
    } else if (arg == "--pcap-snaplen") {
      std::string v;
      if (!value(v) || !sim::parse_snaplen(v, a.snaplen))
        return usage_error("--pcap-snaplen needs a byte count 1..65535 or 'headers'", help);
    } else if (arg == "--pcap") {
      std::string v;
      if (!value(v)) return usage_error("--pcap needs NODE:PORT", help);
      a.pcaps.push_back(v);
    } else if (arg == "--quiet" || arg == "-q") {
      a.quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'", help);
    } else if (a.config.empty()) {
      a.config = arg;
    } else {
      return usage_error("unexpected argument '" + arg + "'", help);
    }
  }
  if (a.config.empty()) return usage_error("missing CONFIG.yaml", help);
  if (a.cmd == "run" && a.out.empty()) return usage_error("missing --out DIR", help);
  return -1;
}

bool make_dirs(const std::string& path, std::string& why) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST) {
      why = cur + ": " + std::strerror(errno);
      return false;
    }
    struct stat st{};
    if (stat(cur.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      why = cur + ": not a directory";
      return false;
    }
  }
  return true;
}

int run_main(int argc, char** argv) {
  Args a;
  if (int rc = parse_args(argc, argv, a); rc >= 0) return rc;

  // 1. Configuration: every bad-input check happens before anything is written.
  sim::Scenario scen;
  std::unique_ptr<core::Config> cfg;
  try {
    cfg = core::Config::load_file(a.config);
    for (const std::string& s : a.sets) cfg->apply_set(s);
    // --seed before reading: generated traffic (permutations) draws from it.
    if (a.has_seed) cfg->apply_set("seed=" + std::to_string(a.seed));
    scen = sim::read_scenario(*cfg);
  } catch (const core::ConfigError& e) {
    std::cerr << "rocesim: " << e.what() << "\n";
    return kBadInput;
  }

  // Captures (NODE:PORT, NODE:*) against the topology, then the budget:
  // nothing is built for a run that would not fit.
  std::vector<sim::PcapRequest> pcaps;
  std::vector<sim::CaptureSpec> captures;
  {
    std::string why;
    if (!sim::resolve_pcaps(scen, a.pcaps, a.snaplen, pcaps, captures, why)) {
      std::cerr << "rocesim: " << why << "\n";
      return kBadInput;
    }
  }
  const sim::Estimate estimate = sim::estimate(scen, captures, a.snaplen);
  {
    std::string key;
    const std::string why = sim::check_budget(scen, estimate, key);
    if (!why.empty()) {
      std::cerr << "rocesim: " << core::ConfigError(cfg->where(key), key, why).what() << "\n";
      return kBadInput;
    }
  }
  if (a.cmd == "validate") {
    if (!a.quiet)
      std::cout << sim::emit_resolved(scen) << "# estimate: " << estimate.memory_text(8) << "\n# estimate: "
                << estimate.output_text(8) << "\n# valid\n";
    return kOk;
  }

  // 2. Elaborate the model.
  sim::Fabric fabric("fabric", scen);

  // 3. Outputs.
  std::string why;
  if (!make_dirs(a.out, why) || (!pcaps.empty() && !make_dirs(a.out + "/pcap", why))) {
    std::cerr << "rocesim: --out " << a.out << ": cannot create directory " << why << "\n";
    return kBadInput;
  }
  if (!fabric.open_pcaps(pcaps, a.out + "/pcap", why) || !fabric.open_time_series(a.out, why)) {
    std::cerr << "rocesim: " << why << "\n";
    return kFail;
  }

  // 4. Simulate.
  const sim::RunResult res = fabric.run();
  bool io_ok = fabric.close_streams();
  io_ok = sim::write_file_atomic(a.out + "/config.resolved.yaml", sim::emit_resolved(scen)) && io_ok;
  io_ok = sim::write_file_atomic(a.out + "/flows.csv", sim::flows_csv(fabric)) && io_ok;
  io_ok = sim::write_file_atomic(a.out + "/pfc.csv", fabric.pfc_csv()) && io_ok;
  io_ok = sim::write_file_atomic(a.out + "/flows.hpcc.txt", fabric.hpcc_flow_file()) && io_ok;
  if (fabric.has_cc_log()) io_ok = sim::write_file_atomic(a.out + "/cc.csv", fabric.cc_csv()) && io_ok;
  io_ok = sim::write_file_atomic(a.out + "/summary.json", sim::summary_json(fabric, res)) && io_ok;
  if (!io_ok) {
    std::cerr << "rocesim: writing outputs in " << a.out << " failed: " << std::strerror(errno) << "\n";
    return kFail;
  }

  if (!a.quiet) {
    size_t done = 0;
    for (const auto& f : fabric.flows()) done += f.done();
    std::cout << "rocesim: scenario '" << scen.name << "' seed " << scen.seed << ": simulated "
              << sim::ps_to_ns_text(res.sim_time_ps) << " ns in " << res.wall_time_s << " s wall\n"
              << "  packets: sent " << res.sent << ", delivered " << res.delivered << ", dropped " << res.dropped
              << ", in flight " << res.in_flight << "\n"
              << "  flows completed: " << done << "/" << fabric.flows().size() << ", link hops: " << res.link_hops
              << " (" << (res.wall_time_s > 0 ? static_cast<double>(res.link_hops) / res.wall_time_s / 1e6 : 0.0)
              << " M per wall-second)"
              << (res.deadlock ? ", DEADLOCK: no delivery since " + sim::ps_to_ns_text(res.last_delivery_ps) + " ns" : "")
              << "\n"
              << "  outputs: " << a.out << "/summary.json, " << a.out << "/flows.csv, " << a.out
              << "/config.resolved.yaml, " << a.out << "/pfc.csv, " << a.out << "/flows.hpcc.txt";
    if (!fabric.switches().empty() && scen.stats.interval_ps) std::cout << ", " << a.out << "/queues.csv";
    if (scen.stats.flow_series && scen.stats.interval_ps) std::cout << ", " << a.out << "/flow_series.csv";
    if (fabric.has_cc_log()) std::cout << ", " << a.out << "/cc.csv";
    if (!pcaps.empty()) std::cout << ", " << a.out << "/pcap/";
    std::cout << "\n";
  }
  if (!res.conserved) {
    std::cerr << "rocesim: packet conservation violated: sent " << res.sent << " != delivered " << res.delivered
              << " + dropped " << res.dropped << " + in flight " << res.in_flight << " (pool holds "
              << res.pool_in_use << ")\n";
    return kFail;
  }
  return kOk;
}

}  // namespace

// Our own main(): it must silence SystemC's banner before the kernel starts
// (libsystemc's main prints it before calling sc_main).
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
  // Keep the output for our own summary: no "stopped by user" note.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  // SystemC errors are simulation failures (exit 1), not crashes.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  try {
    return run_main(argc, argv);
  } catch (const sc_core::sc_report& r) {
    std::cerr << "rocesim: simulation failed: " << r.what() << "\n";
    return kFail;
  } catch (const std::exception& e) {
    std::cerr << "rocesim: simulation failed: " << e.what() << "\n";
    return kFail;
  }
}
