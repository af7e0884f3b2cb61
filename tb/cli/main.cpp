// rocesim command line: `rocesim run` and `rocesim validate`.
// Exit status: 0 ok, 2 bad input (config, arguments, output path), 1 simulation
// or output failure (or a --fail-on condition that holds), 130/143 stopped by
// SIGINT/SIGTERM, 124 stopped by --max-wall.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "core/config.h"
#include "core/systemc_pools.h"
#include "core/units.h"
#include "sim/budget.h"
#include "sim/capture.h"
#include "sim/digest.h"
#include "sim/fabric.h"
#include "sim/outputs.h"
#include "sim/paths.h"
#include "sim/sampler.h"
#include "sim/scenario.h"
#include "wave/tracer.h"

namespace {

using namespace rocesim;

constexpr int kOk = 0, kFail = 1, kBadInput = 2;
// Stopped early with the outputs so far: 128 + the signal (the shell's
// convention), and 124 for the wall-clock limit (as timeout(1)).
constexpr int kWallLimit = 124;

const char* kMainHelp =
    "rocesim " ROCESIM_VERSION " - cycle-approximate model of a RoCEv2 switch fabric\n"
    "\n"
    "usage: rocesim run CONFIG.yaml --out DIR [--force] [--seed N] [--set key.path=value ...] [--pcap NODE:PORT ...]\n"
    "                   [--fail-on COND,...] [--record-ops FILE] [--trace FILE.fst|FILE.vcd [--trace-from T] [--trace-to T]\n"
    "                   [--trace-select NODE[:PORT][,...]]]\n"
    "       rocesim validate CONFIG.yaml [--seed N] [--set key.path=value ...] [--pcap NODE:PORT ...]\n"
    "       rocesim keys [SECTION]   (the key reference of docs/config.md, from the key tables)\n"
    "       rocesim --help | --version\n"
    "\n"
    "Run 'rocesim run --help' or 'rocesim validate --help' for details.\n"
    "Exit status: 0 ok, 2 bad input, 1 simulation or output failure or a --fail-on condition,\n"
    "130/143 interrupted (SIGINT/SIGTERM), 124 wall-clock limit (--max-wall).\n";

const char* kRunHelp =
    "usage: rocesim run CONFIG.yaml --out DIR [options]\n"
    "\n"
    "Scenarios to start from are in configs/scenarios/ (default.yaml, what 'make run' runs, is the\n"
    "seed article's 256-host leaf-spine; README.md's table says what each shows and how long it takes),\n"
    "topologies in configs/topologies/. Docs: docs/user-guide.md (running), docs/config.md (every key;\n"
    "also 'rocesim keys'), docs/outputs.md (every output file and column).\n"
    "\n"
    "Runs the scenario and writes into DIR:\n"
    "  config.resolved.yaml  the effective configuration (defaults and overrides applied)\n"
    "  summary.json          run totals (schema: docs/outputs.md)\n"
    "  flows.csv             one row per flow (FCT, ideal FCT, slowdown, retransmissions, CNPs)\n"
    "  pfc.csv               every XOFF/XON, pause start/end and watchdog event\n"
    "  flows.hpcc.txt        the flows in HPCC's flow-file format\n"
    "  paths.csv             each flow's hop-by-hop path per direction, a row per change (stats.paths)\n"
    "  ecmp_members.csv      frames and bytes per ECMP group member (stats.paths)\n"
    "  packet_trace.csv      the selected data packets hop by hop: queue found, pause, queueing (stats.packet_trace)\n"
    "  queues.csv            switch queue time series (with switches and stats.interval)\n"
    "  ports.csv             per-port utilization and bytes per interval, hosts and switches (stats.interval)\n"
    "  classes.csv           throughput per traffic class (flow tag) per interval (stats.interval)\n"
    "  flow_series.csv       per-flow throughput time series (stats.flow_series)\n"
    "  cc.csv                DCQCN rate/target/alpha changes (hosts.cc: dcqcn)\n"
    "  pcap/NODE-pPORT-{rx,tx}.pcap  captures asked for with --pcap\n"
    "  FILE.fst|.vcd, FILE.gtkw  waveforms asked for with --trace (anywhere; docs/waveforms.md)\n"
    "\n"
    "options:\n"
    "  --out DIR             output directory: created, or existing and empty\n"
    "  --force               empty an existing --out DIR first (refused for /, $HOME, the working\n"
    "                        directory and its parents, and a directory holding .git)\n"
    "  --max-wall DURATION   stop after this much wall-clock time of simulation (e.g. 90s, 10m, 2h;\n"
    "                        a bare number is seconds): outputs so far, \"complete\": false, exit 124\n"
    "  --seed N              random seed (overrides the config's 'seed')\n"
    "  --set key.path=value  override a config value, e.g. --set links.rate=25Gbps (repeatable)\n"
    "  --pcap NODE:PORT      capture both directions of a port, e.g. --pcap h1:0 (repeatable)\n"
    "  --pcap NODE:*         capture every port of a node, e.g. --pcap leaf0:*\n"
    "  --pcap-snaplen N      keep the first N bytes (1..65535) of each captured frame, or 'headers'\n"
    "                        for the headers only (no payload)\n"
    "  --quiet               print nothing but errors (no summary table, no progress line)\n"
    "  --json                print summary.json on stdout instead of the summary table\n"
    "  --record-ops FILE     write every queue-manager operation and its result to FILE (replay: qm_replay FILE)\n"
    "  --queue-impl MODE     the queue manager that decides: tlm (default, the C++ model), rtl (the\n"
    "                        Verilated RTL) or lockstep (both, compared) (= --set switch.queue_impl=MODE)\n"
    "  --trace FILE.fst      TLM-level waveforms (FST; FILE.vcd for VCD) of queue depths, PG use and\n"
    "                        XOFF, paused priorities, link busy, ECN marks, pools, drops, DCQCN rates, with\n"
    "                        FILE.gtkw beside it for GTKWave (docs/waveforms.md)\n"
    "  --trace-from T        keep the trace from simulated time T on (e.g. 100us; default 0)\n"
    "  --trace-to T          keep the trace up to T (default: the end); --trace-from < --trace-to\n"
    "  --trace-select LIST   trace only these nodes or ports: NODE, NODE:PORT or NODE:*, comma-separated,\n"
    "                        repeatable (default: every switch and host), e.g. sw0:16,h0\n"
    "  --check-invariants    check the model every 10 us simulated and at the end (packet conservation,\n"
    "                        cell accounting, counters, RC PSN order); a violation ends the run, exit 1\n"
    "  --fail-on COND,...    exit 1 when a condition holds at the end of a run that completed (one line each\n"
    "                        on stderr; outputs as usual), repeatable: deadlock (summary.json pfc.deadlock),\n"
    "                        lossless_drops (a lossless-priority frame dropped: headroom_overflow or\n"
    "                        pfc_watchdog), drops (any frame dropped), unfinished_flows (a flow did not\n"
    "                        complete)\n"
    "\n"
    "Bad input is reported as FILE:LINE:COL: key 'PATH': reason and exits 2 before any output is written.\n"
    "So is a run whose estimated memory or output exceeds sim.max_memory or sim.max_output.\n"
    "On a terminal, a run that takes more than 2 s shows a progress line on stderr.\n"
    "SIGINT or SIGTERM stops at the next slice of simulated time and writes the outputs gathered so far\n"
    "(summary.json \"complete\": false); exit 130/143. A second signal ends the process at once.\n";

const char* kValidateHelp =
    "usage: rocesim validate CONFIG.yaml [--seed N] [--set key.path=value ...] [--pcap NODE:PORT ...] [--pcap-snaplen N]\n"
    "\n"
    "Reads the configuration, applies overrides, checks every key and value and the topology,\n"
    "estimates the run's memory and output (checked against sim.max_memory and sim.max_output)\n"
    "and prints the effective configuration with the estimate. Builds no model and writes nothing.\n"
    "--seed and --pcap are checked as 'run' checks them (the seed also draws generated traffic, so the\n"
    "estimate is the run's); a capture is checked against the topology and counted in the output estimate.\n"
    "Exit 0 if valid, 2 if not.\n";

struct Args {
  std::string cmd, config, out;
  bool has_seed = false;
  uint64_t seed = 0;
  std::vector<std::string> sets, pcaps;
  uint32_t snaplen = sim::kSnapFull;  // --pcap-snaplen
  bool quiet = false, help = false, force = false;
  bool json = false;  // --json: summary.json on stdout instead of the table
  double max_wall_s = 0;
  std::string max_wall;  // as given
  bool check_invariants = false;
  std::string record_ops;  // --record-ops FILE
  std::string trace, trace_from, trace_to;  // --trace FILE, --trace-from T, --trace-to T (as given)
  uint64_t trace_from_ps = 0, trace_to_ps = UINT64_MAX;
  std::vector<std::string> trace_select;
  std::vector<std::string> fail_on;  // --fail-on conditions, each once, in the order given
};

// The --fail-on conditions (docs/user-guide.md), in the order they are checked.
const char* const kFailOn[] = {"deadlock", "lossless_drops", "drops", "unfinished_flows"};

// Splits "a,b" into the known conditions; false (and the bad name) for an
// unknown or empty one.
bool parse_fail_on(const std::string& list, std::vector<std::string>& out, std::string& bad) {
  size_t at = 0;
  while (true) {
    const size_t comma = list.find(',', at);
    const std::string name = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    bool known = false;
    for (const char* k : kFailOn) known = known || name == k;
    if (!known) {
      bad = name;
      return false;
    }
    bool seen = false;
    for (const std::string& x : out) seen = seen || x == name;
    if (!seen) out.push_back(name);
    if (comma == std::string::npos) return true;
    at = comma + 1;
  }
}

// One line, as for bad configuration (the help text only with --help).
int usage_error(const std::string& msg, const char* help) {
  const char* see = help == kRunHelp ? "rocesim run --help" : help == kValidateHelp ? "rocesim validate --help"
                                                                                    : "rocesim --help";
  std::cerr << "rocesim: " << msg << " (see '" << see << "')\n";
  return kBadInput;
}

// "90s", "1.5m", "2h", "500ms", or a bare number of seconds; > 0.
bool parse_wall(const std::string& s, double& seconds) {
  size_t end = 0;
  while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.')) ++end;
  if (end == 0 || s.find('.') != s.rfind('.') || (s.find('.') == 0)) return false;
  const std::string unit = s.substr(end);
  double mul = 0;
  if (unit.empty() || unit == "s") mul = 1;
  else if (unit == "ms") mul = 1e-3;
  else if (unit == "m" || unit == "min") mul = 60;
  else if (unit == "h") mul = 3600;
  else return false;
  seconds = std::strtod(s.substr(0, end).c_str(), nullptr) * mul;
  return seconds > 0 && seconds < 1e9;
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
  if (a.cmd == "keys") {
    // The key reference of docs/config.md, generated from the key tables that
    // read and emit each section (tb/sim/config_util.h); one section or all.
    bool any = false;
    for (const std::string& sec : sim::key_reference_sections()) {
      if (argc > 2 && sec != argv[2]) continue;
      std::cout << "<!-- keys:" << sec << " -->\n" << sim::key_reference(sec) << "<!-- /keys -->\n";
      any = true;
    }
    return any ? kOk : usage_error(std::string("no key table '") + argv[2] + "'", kMainHelp);
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
    } else if (arg == "--seed") {
      std::string v;
      if (!value(v) || !parse_u64(v, a.seed) || a.seed > static_cast<uint64_t>(INT64_MAX))
        return usage_error("--seed needs a non-negative integer", help);
      a.has_seed = true;
    } else if (a.cmd == "run" && arg == "--force") {
      a.force = true;
    } else if (a.cmd == "run" && arg == "--max-wall") {
      std::string v;
      if (!value(v) || !parse_wall(v, a.max_wall_s))
        return usage_error("--max-wall needs a positive duration, e.g. 90s, 10m or 2h", help);
      a.max_wall = v;
    } else if (arg == "--pcap-snaplen") {
      std::string v;
      if (!value(v) || !sim::parse_snaplen(v, a.snaplen))
        return usage_error("--pcap-snaplen needs a byte count 1..65535 or 'headers'", help);
    } else if (arg == "--pcap") {
      std::string v;
      if (!value(v)) return usage_error("--pcap needs NODE:PORT", help);
      a.pcaps.push_back(v);
    } else if (arg == "--queue-impl") {
      std::string v;
      if (!value(v) || v.empty()) return usage_error("--queue-impl needs tlm, rtl or lockstep", help);
      a.sets.push_back("switch.queue_impl=" + v);
    } else if (a.cmd == "run" && arg == "--record-ops") {
      if (!value(a.record_ops) || a.record_ops.empty()) return usage_error("--record-ops needs a file name", help);
    } else if (a.cmd == "run" && arg == "--trace") {
      wave::Format f;
      if (!value(a.trace) || a.trace.empty()) return usage_error("--trace needs a file name, e.g. out/wave.fst", help);
      if (!wave::format_of(a.trace, f))
        return usage_error("--trace " + a.trace + ": the name must end in .fst (FST) or .vcd (VCD)", help);
    } else if (a.cmd == "run" && (arg == "--trace-from" || arg == "--trace-to")) {
      std::string v, err;
      uint64_t& ps = arg == "--trace-from" ? a.trace_from_ps : a.trace_to_ps;
      if (!value(v)) return usage_error(arg + " needs a simulated time, e.g. 10us", help);
      if (!core::parse_time(v, ps, err)) return usage_error(arg + " " + v + ": " + err, help);
      (arg == "--trace-from" ? a.trace_from : a.trace_to) = v;
    } else if (a.cmd == "run" && arg == "--trace-select") {
      std::string v;
      if (!value(v) || v.empty()) return usage_error("--trace-select needs NODE, NODE:PORT or NODE:*, comma-separated", help);
      a.trace_select.push_back(v);
    } else if (a.cmd == "run" && (arg == "--fail-on" || arg.rfind("--fail-on=", 0) == 0)) {
      std::string v, bad;
      if (arg == "--fail-on") {
        if (!value(v)) return usage_error("--fail-on needs a condition: deadlock, lossless_drops, drops or unfinished_flows", help);
      } else {
        v = arg.substr(10);
      }
      if (!parse_fail_on(v, a.fail_on, bad))
        return usage_error("--fail-on " + v + ": " + (bad.empty() ? std::string("empty condition") : "unknown condition '" + bad + "'") +
                               "; conditions: deadlock, lossless_drops, drops or unfinished_flows", help);
    } else if (a.cmd == "run" && arg == "--check-invariants") {
      a.check_invariants = true;
    } else if (arg == "--quiet" || arg == "-q") {
      a.quiet = true;
    } else if (a.cmd == "run" && arg == "--json") {
      a.json = true;
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
  if (a.trace.empty()) {
    const char* lone = !a.trace_from.empty() ? "--trace-from" : !a.trace_to.empty() ? "--trace-to"
                       : !a.trace_select.empty() ? "--trace-select" : nullptr;
    if (lone) return usage_error(std::string(lone) + " needs --trace FILE.fst (or FILE.vcd)", help);
  }
  if (!a.trace_to.empty() && a.trace_from_ps >= a.trace_to_ps)
    return usage_error("--trace-from " + (a.trace_from.empty() ? std::string("0") : a.trace_from) +
                           " must be before --trace-to " + a.trace_to, help);
  return -1;
}

// The first SIGINT or SIGTERM: remembered for the run loop, which stops at its
// next slice; both signals go back to their default action, so a second one
// ends the process at once. Only async-signal-safe calls here.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGINT, &dfl, nullptr);
  sigaction(SIGTERM, &dfl, nullptr);
}

void install_stop_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  // Each blocks the other while the handler runs: a SIGTERM right behind a
  // SIGINT then finds the default action, not a second run of the handler.
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = SA_RESTART;  // writes in progress are resumed, not cut short
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// "pcap/h1-p0-rx.pcap" for "OUT/pcap/h1-p0-rx.pcap".
std::string relative_to(const std::string& dir, const std::string& path) {
  return path.rfind(dir + "/", 0) == 0 ? path.substr(dir.size() + 1) : path;
}

// The waveform window around a lockstep mismatch: the run again (same
// configuration and seed, so the same operations: the mismatch recurs at the
// same time) with --trace on the mismatching switch for [T - 2 us, T + 200 ns],
// into OUT/lockstep_mismatch/: the TLM-level trace wave.fst and the RTL's
// wave.rtl.SWITCH.fst, each with its .gtkw. Not nested (the rerun does not
// open a window of its own: ROCESIM_MISMATCH_WINDOW=0), and skipped when that
// variable is 0. The rerun's own exit status (1, the same mismatch) is
// expected; it is reported only when it is not.
void mismatch_window(const Args& a, const std::string& sw, uint64_t t_ps) {
  const char* env = std::getenv("ROCESIM_MISMATCH_WINDOW");
  if (env && std::string(env) == "0") return;
  const uint64_t from = t_ps > 2000000 ? t_ps - 2000000 : 0, to = t_ps + 200000;
  const std::string dir = a.out + "/lockstep_mismatch";
  std::vector<std::string> args = {"rocesim", "run", a.config, "--out", dir, "--force", "--quiet",
                                   "--trace", dir + "/wave.fst", "--trace-from", std::to_string(from) + "ps",
                                   "--trace-to", std::to_string(to) + "ps", "--trace-select", sw};
  if (a.has_seed) args.insert(args.end(), {"--seed", std::to_string(a.seed)});
  for (const std::string& kv : a.sets) args.insert(args.end(), {"--set", kv});
  std::cerr << "rocesim: lockstep mismatch: writing the waveform window " << sim::ps_to_ns_text(from) << " .. "
            << sim::ps_to_ns_text(to) << " ns of " << sw << " into " << dir << " (a rerun)\n";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("ROCESIM_MISMATCH_WINDOW", "0", 1);
    // The rerun's own report (the same mismatch) goes to its log, not to the terminal.
    const std::string log = dir + ".log";
    if (std::FILE* f = std::freopen(log.c_str(), "w", stderr)) (void)f;
    std::vector<char*> argv;
    for (std::string& x : args) argv.push_back(x.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || (WEXITSTATUS(st) != kFail && WEXITSTATUS(st) != kOk)) {
    std::cerr << "rocesim: lockstep mismatch: the waveform rerun failed (" << dir << ".log)\n";
    return;
  }
  std::cerr << "rocesim: lockstep mismatch: gtkwave " << dir << "/wave.fst " << dir << "/wave.gtkw; gtkwave " << dir
            << "/wave.rtl." << sw << ".fst " << dir << "/wave.rtl." << sw << ".gtkw\n";
}

// The progress line of a run on a terminal: simulated time and its share of
// sim.duration, flows done, events per wall-second, and an ETA from the
// larger of the two shares (with stop_when_done the flows may end the run
// first). Rewritten in place with a carriage return; cleared at the end.
struct ProgressLine {
  bool shown = false;
  uint64_t last_events = 0;
  double last_wall = 0;
  void show(const sim::Progress& p) {
    const double share_t = p.end_ps ? static_cast<double>(p.sim_ps) / static_cast<double>(p.end_ps) : 0.0;
    const double share_f = p.flows ? static_cast<double>(p.flows_done) / static_cast<double>(p.flows) : 0.0;
    const double share = std::max(share_t, share_f);
    const double dt = p.wall_s - last_wall;
    const double rate = dt > 0 ? static_cast<double>(p.events - last_events) / dt : 0.0;
    last_events = p.events;
    last_wall = p.wall_s;
    char eta[32] = "?";
    if (share > 0) std::snprintf(eta, sizeof eta, "%.0f s", p.wall_s * (1 - share) / share);
    std::fprintf(stderr, "\rrocesim: %.3f of %.3f ms simulated (%.0f %%), %zu/%zu flows done, %.2f M events/s, ETA %s\033[K",
                 static_cast<double>(p.sim_ps) / 1e9, static_cast<double>(p.end_ps) / 1e9, 100 * share_t, p.flows_done,
                 p.flows, rate / 1e6, eta);
    std::fflush(stderr);
    shown = true;
  }
  void clear() {
    if (!shown) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown = false;
  }
};

// The fast exit: once every output is written, sc_main ends the process
// with std::_Exit (after flushing stdio and the iostreams) instead of
// destroying the model, whose SystemC objects, sockets and per-switch state
// take long to unregister and free (S1 of issue 12: 92 M of 1 610 M
// instructions; S2: 795 M, as much as building it). Armed
// only after the outputs stage and only when the tear-down writes nothing
// (sim::Fabric::teardown_writes_nothing: no RTL, whose destructor finishes
// its waveforms and coverage files); a return before that, or an exception,
// destroys the model as usual. Builds with AddressSanitizer tear down, so
// its leak check still sees the model's memory.
bool g_fast_exit = false;

// --fail-on: exit 1 when a named condition holds at the end of a completed
// run, one line per condition that holds (the figures are summary.json's).
// lossless_drops counts the drop reasons only lossless frames can have:
// headroom_overflow (only a lossless PG has headroom, docs/design.md) and
// pfc_watchdog (a queue stormed by PFC pauses).
int fail_on(const Args& a, const sim::Fabric& fabric, const sim::RunResult& res) {
  int rc = kOk;
  for (const std::string& c : a.fail_on) {
    std::string why;
    if (c == "deadlock" && res.deadlock) {
      why = "frames in flight and no delivery since " + sim::ps_to_ns_text(res.last_delivery_ps) + " ns";
    } else if (c == "lossless_drops") {
      const uint64_t h = fabric.ledger().dropped(packet::DropReason::headroom_overflow);
      const uint64_t w = fabric.ledger().dropped(packet::DropReason::pfc_watchdog);
      if (h + w)
        why = std::to_string(h + w) + " lossless frames dropped (headroom_overflow " + std::to_string(h) +
              ", pfc_watchdog " + std::to_string(w) + ")";
    } else if (c == "drops" && res.dropped) {
      why = std::to_string(res.dropped) + " frames dropped (summary.json drops_by_reason)";
    } else if (c == "unfinished_flows") {
      size_t done = 0;
      for (const auto& f : fabric.flows()) done += f.done();
      if (done < fabric.flows().size())
        why = std::to_string(fabric.flows().size() - done) + " of " + std::to_string(fabric.flows().size()) +
              " flows did not complete";
    }
    if (why.empty()) continue;
    std::cerr << "rocesim: --fail-on " << c << ": " << why << "\n";
    rc = kFail;
  }
  return rc;
}

struct FastExit {
  std::unique_ptr<sim::Fabric>& fabric;
  bool armed = false;
  ~FastExit() {
#if defined(__SANITIZE_ADDRESS__)
    armed = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    armed = false;
#endif
#endif
    if (!armed) return;
    (void)fabric.release();  // left to the process's end
    g_fast_exit = true;
  }
};

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
    // An empty file (or only comments) is a mistake, not a scenario: the
    // defaults alone simulate nothing.
    if (cfg->root().keys().empty())
      throw core::ConfigError(cfg->file(), "", "the configuration is empty: nothing to simulate");
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
  // --trace: the selection against the topology, the window against the run.
  wave::Selection trace_sel;
  if (!a.trace.empty()) {
    std::string why;
    if (!wave::resolve_trace_select(scen, a.trace_select, trace_sel, why)) {
      std::cerr << "rocesim: " << why << "\n";
      return kBadInput;
    }
    if (a.trace_from_ps > 0 && a.trace_from_ps >= scen.sim.duration_ps) {
      std::cerr << "rocesim: --trace-from " << a.trace_from << ": not before the end of the run (sim.duration "
                << core::format_time(scen.sim.duration_ps) << ")\n";
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
  if (scen.flows.empty() && scen.sim.stop_when_done)
    std::cerr << "rocesim: warning: " << a.config << ": no flows and no traffic: the run ends at 0 ns\n";
  if (a.cmd == "validate") {
    if (!a.quiet)
      std::cout << sim::emit_resolved(scen) << "# estimate: " << estimate.memory_text(8) << "\n# estimate: "
                << estimate.output_text(8) << "\n# valid\n";
    return kOk;
  }
  // The output directory, before the model is built: fresh (or --force), writable.
  if (a.cmd == "run") {
    std::string why;
    if (!sim::check_out_dir(a.out, a.force, why)) {
      std::cerr << "rocesim: --out " << a.out << ": " << why << "\n";
      return kBadInput;
    }
  }

  // 2. Elaborate the model. On the normal end of a run it is not destroyed
  // (FastExit above): its tear-down costs much and writes nothing.
  std::unique_ptr<sim::Fabric> fabric_owner = std::make_unique<sim::Fabric>("fabric", scen);
  sim::Fabric& fabric = *fabric_owner;
  FastExit fast_exit{fabric_owner};

  // 3. Outputs: a fresh directory, proved writable before simulating.
  std::string why;
  if (!sim::prepare_out_dir(a.out, a.force, why)) {
    std::cerr << "rocesim: --out " << a.out << ": " << why << "\n";
    return kBadInput;
  }
  if (!pcaps.empty() && mkdir((a.out + "/pcap").c_str(), 0777) != 0) {
    std::cerr << "rocesim: --out " << a.out << ": cannot create directory " << a.out << "/pcap: " << std::strerror(errno)
              << "\n";
    return kBadInput;
  }
  if (!fabric.open_pcaps(pcaps, a.out + "/pcap", why) || !fabric.open_time_series(a.out, why) ||
      !fabric.open_event_logs(a.out, why) || !fabric.open_packet_trace(a.out, why) ||
      !fabric.open_analytics(a.out, why) ||
      (!a.record_ops.empty() && !fabric.open_op_record(a.record_ops, why))) {
    std::cerr << "rocesim: " << why << "\n";
    return kFail;
  }
  std::unique_ptr<wave::Tracer> tracer;
  std::vector<std::string> rtl_traces;  // STEM.rtl.SWITCH.fst and .gtkw (rtl and lockstep modes)
  if (!a.trace.empty()) {
    wave::Format fmt;
    wave::format_of(a.trace, fmt);
    tracer = std::make_unique<wave::Tracer>(fabric, trace_sel, a.trace_from_ps, a.trace_to_ps);
    if (!tracer->open(a.trace, fmt, why)) {
      std::cerr << "rocesim: --trace " << a.trace << ": " << why << "\n";
      return kFail;
    }
    // rtl and lockstep: the RTL's own signals beside it, per traced switch.
    if (scen.sw.queue_impl != "tlm") {
      const std::string stem = a.trace.substr(0, a.trace.rfind('.'));
      auto selected = [&](const std::string& n) { return trace_sel.all() || trace_sel.nodes.count(n) > 0; };
      if (!fabric.trace_rtl(stem, selected, a.trace_from_ps, a.trace_to_ps, rtl_traces, why)) {
        std::cerr << "rocesim: --trace " << a.trace << ": " << why << "\n";
        return kFail;
      }
    }
  }

  // 4. Simulate; SIGINT, SIGTERM and --max-wall stop it between slices.
  if (a.check_invariants) fabric.check_invariants(true);
  install_stop_handlers();
  sim::RunControl ctl;
  ctl.signal = &g_stop_signal;
  ctl.max_wall_s = a.max_wall_s;
  // Progress on stderr, only for a person watching: a terminal, not --quiet,
  // and only once the run has taken 2 s (RunControl), updated in place.
  ProgressLine progress;
  if (!a.quiet && isatty(STDERR_FILENO)) ctl.progress = [&progress](const sim::Progress& p) { progress.show(p); };
  const sim::RunResult res = fabric.run(ctl);
  progress.clear();

  // 5. Every output is attempted, each to NAME.partial and renamed; summary.json
  // last, listing what could not be written.
  sim::RunStatus status;
  if (res.stop_signal)
    status.reason = std::string("interrupted by ") + (res.stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
  else if (res.wall_limit)
    status.reason = "wall-clock limit (--max-wall " + a.max_wall + ")";
  const sim::InvariantChecker* inv = fabric.invariants();
  if (inv && !inv->ok()) status.reason = "invariant violated: " + inv->violation().message();
  std::vector<sim::OutputFailure> failed;
  fabric.close_streams(failed);
  fabric.finish_analytics(res.sim_time_ps, failed);  // switch.analytics: the last records, flow_report.csv
  if (tracer) {
    std::string file, err;
    if (!tracer->close(res.sim_time_ps, file, err)) failed.push_back({file, err});
    // A change behind the written time is a hook's bug (trace/recorder.h): say so.
    if (tracer->recorder().late())
      std::cerr << "rocesim: warning: --trace: " << tracer->recorder().late()
                << " value changes arrived behind the written time and were written late\n";
  }
  auto write = [&](const std::string& name, const std::string& content) {
    std::string err;
    if (!sim::write_file_atomic(a.out + "/" + name, content, err)) failed.push_back({a.out + "/" + name, err});
  };
  write("config.resolved.yaml", sim::emit_resolved(scen));
  write("flows.csv", sim::flows_csv(fabric));
  write("flows.hpcc.txt", fabric.hpcc_flow_file());
  write("fct.txt", sim::fct_txt(fabric));
  if (const sim::PathRecorder* paths = fabric.paths()) {
    write("paths.csv", paths->csv());
    write("ecmp_members.csv", sim::ecmp_members_csv(fabric));
  }
  for (const sim::OutputFailure& f : failed) status.missing.push_back({relative_to(a.out, f.file), f.error});
  std::string err;
  const std::string summary = sim::summary_json(fabric, res, status);
  const bool summary_ok = sim::write_file_atomic(a.out + "/summary.json", summary, err);
  if (!summary_ok) {
    // Without summary.json, a plain failure record (written in place: it is
    // small, and all there is to say).
    status.missing.push_back({"summary.json", err});
    std::string rec = "rocesim run did not complete: " + (status.reason.empty() ? "outputs missing" : status.reason) + "\n";
    for (const sim::OutputFailure& f : status.missing) rec += "missing " + f.file + ": " + f.error + "\n";
    if (std::FILE* fr = std::fopen((a.out + "/FAILED.txt").c_str(), "w")) {
      std::fputs(rec.c_str(), fr);
      std::fclose(fr);
    }
  }
  // Every output is closed and renamed (streams by close_streams, files by
  // write_file_atomic): from here on the model need not be torn down.
  fast_exit.armed = fabric.teardown_writes_nothing();
  if (!status.missing.empty()) {
    std::cerr << "rocesim: writing outputs in " << a.out << " failed:";
    for (const sim::OutputFailure& f : status.missing) std::cerr << " " << f.file << " (" << f.error << ")";
    std::cerr << (summary_ok ? "; summary.json lists them\n" : "\n");
    return kFail;
  }

  if (a.json && !a.quiet) {
    std::cout << summary;
  } else if (!a.quiet) {
    // The end-of-run table (sim/digest.h), then where the outputs are.
    std::vector<std::string> files{"summary.json", "flows.csv", "config.resolved.yaml", "pfc.csv", "flows.hpcc.txt",
                                   "fct.txt"};
    const sim::Sampler& sampler = fabric.sampler();
    if (fabric.paths()) files.insert(files.end(), {"paths.csv", "ecmp_members.csv"});
    if (fabric.packet_trace()) files.push_back("packet_trace.csv");
    if (sampler.has_queues()) files.push_back("queues.csv");
    if (sampler.has_ports()) files.push_back("ports.csv");
    if (sampler.has_classes()) files.push_back("classes.csv");
    if (sampler.has_flow_series()) files.push_back("flow_series.csv");
    if (fabric.has_cc_log()) files.push_back("cc.csv");
    if (fabric.analytics())
      for (const char* f : {"flow_records.jsonl", "flow_records.ipfix", "flow_report.csv"}) files.push_back(f);
    if (!pcaps.empty()) files.push_back("pcap/");
    std::cout << sim::summary_table(sim::digest(fabric, res), fabric, res, a.out, files);
    if (tracer)
      std::cout << "waveforms: " << a.trace << " (" << tracer->signals() << " signals, " << tracer->recorder().written()
                << " values), " << wave::gtkw_path(a.trace) << "\n";
  }
  if (!status.reason.empty()) std::cerr << "rocesim: " << status.reason << " at " << sim::ps_to_ns_text(res.sim_time_ps)
                                        << " ns simulated: outputs so far in " << a.out << " (\"complete\": false)\n";
  if (inv && !inv->ok()) return kFail;  // the reason is printed above
  for (const auto& sw : fabric.switches()) {
    const qm::LockstepQueueManager* l = sw->lockstep();
    if (!l || !l->mismatches()) continue;
    const qm::Mismatch& m = l->first_mismatch();
    std::cerr << "rocesim: lockstep mismatch on " << sw->basename() << " at " << sim::ps_to_ns_text(m.t_ps)
              << " ns: " << m.what << " (" << l->mismatches() << " of " << l->operations()
              << " operations differ; first: " << m.op << ")\n";
    mismatch_window(a, sw->basename(), m.t_ps);
    return kFail;
  }
  if (inv && !a.quiet && !a.json) std::cout << "  invariants: all held at " << inv->checks() << " checks\n";
  if (!res.conserved) {
    std::cerr << "rocesim: packet conservation violated: sent " << res.sent << " != delivered " << res.delivered
              << " + dropped " << res.dropped << " + in flight " << res.in_flight << " (pool holds "
              << res.pool_in_use << ")\n";
    return kFail;
  }
  if (res.stop_signal) return 128 + res.stop_signal;
  if (res.wall_limit) return kWallLimit;
  return fail_on(a, fabric, res);
}

}  // namespace

// Our own main(): it must silence SystemC's banner before the kernel starts
// (libsystemc's main prints it before calling sc_main).
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
  // libsystemc's 3 MiB of concatenation temporaries, resident from its load:
  // the model needs none of them (core/systemc_pools.h).
  rocesim::core::trim_systemc_temp_heap();
  // Keep the output for our own summary: no "stopped by user" note.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  // SystemC errors are simulation failures (exit 1), not crashes.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  int rc = kFail;
  try {
    rc = run_main(argc, argv);
  } catch (const sc_core::sc_report& r) {
    std::cerr << "rocesim: simulation failed: " << r.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "rocesim: simulation failed: " << e.what() << "\n";
  }
  if (g_fast_exit) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(rc);
  }
  return rc;
}
