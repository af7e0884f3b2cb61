// Builds the model described by a Scenario (hosts, switches, links) and runs it.
#pragma once

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "host/host.h"
#include "link/ledger.h"
#include "link/link.h"
#include "link/pcap.h"
#include "packet/packet.h"
#include "sim/invariants.h"
#include "sim/output_file.h"
#include "sim/scenario.h"
#include "switch/switch.h"
#include "topology/route_table.h"

namespace rocesim::rtl {
class QmRtl;  // rtl/sim/qm_rtl.h, in builds with Verilator
}

namespace rocesim::sim {

// A capture request: --pcap NODE:PORT.
class EventCsvStream;  // sim/outputs.h
class Sampler;         // sim/sampler.h
class PathRecorder;    // sim/paths.h
class PacketTracer;    // sim/packet_trace.h
class FabricAnalytics; // sim/analytics_run.h

struct PcapRequest {
  std::string arg;   // as given, for messages
  std::string node;
  uint32_t port = 0;
  uint32_t snaplen = link::PcapWriter::kSnapFull;  // --pcap-snaplen (link/pcap.h)
};

// Parses "NODE:PORT"; false with a reason on bad syntax.
bool parse_pcap_request(const std::string& arg, PcapRequest& out, std::string& why);


// What may end a run before its end: both are polled between slices of
// simulated time (each slice a few ms of wall time), never inside an event.
// Where a run is, for a progress display (tb/cli: a line on a terminal).
struct Progress {
  uint64_t sim_ps = 0, end_ps = 0;   // simulated time now, and sim.duration
  size_t flows_done = 0, flows = 0;
  uint64_t events = 0;               // summary.json's events so far
  double wall_s = 0;                 // wall-clock time since run() began
};

struct RunControl {
  const volatile std::sig_atomic_t* signal = nullptr;  // set non-zero (the signal number) to stop
  double max_wall_s = 0;                                // wall-clock limit of the simulation; 0: none
  // Called between slices (never inside an event: no wake-up of its own),
  // once the run has taken progress_after_s of wall time, then at most every
  // progress_every_s; null: none.
  std::function<void(const Progress&)> progress;
  double progress_after_s = 2.0, progress_every_s = 0.5;
};

struct RunResult {
  int stop_signal = 0;           // the signal that stopped the run, or 0
  bool wall_limit = false;       // stopped by RunControl::max_wall_s
  uint64_t sim_time_ps = 0;
  double wall_time_s = 0;
  uint64_t events = 0;
  uint64_t link_hops = 0;
  uint64_t sent = 0, delivered = 0, dropped = 0, in_flight = 0;
  uint64_t pool_in_use = 0;
  bool conserved = false;        // sent == delivered + dropped + in_flight and pool agrees
  bool all_flows_done = false;
  uint64_t last_delivery_ps = 0;
  bool deadlock = false;         // frames in flight and no delivery for sim.deadlock_after
};

// A switch's routing table as the chip's lookup interface.
class TopoRoutes : public sw::RouteLookup {
 public:
  explicit TopoRoutes(const std::vector<topology::Route>& r) : m_table(r) {}
  uint32_t lookup(uint32_t dst_ip) const override { return m_table.lookup(dst_ip); }
 private:
  topology::RouteTable m_table;
};

class Fabric : public sc_core::sc_module, public host::FlowListener {
 public:
  SC_HAS_PROCESS(Fabric);
  Fabric(sc_core::sc_module_name name, const Scenario& s);
  ~Fabric() override;

  // Empty if ok, else the reason (unknown node / port).
  std::string check_pcap(const PcapRequest& r) const;
  // Opens DIR/pcap/NODE-pPORT-{rx,tx}.pcap(.partial); false with a reason on I/O failure.
  bool open_pcaps(const std::vector<PcapRequest>& reqs, const std::string& dir, std::string& why);
  // --record-ops FILE: every switch's queue-manager operations (qm/ops_file.h)
  // into FILE.partial, renamed by close_streams(); false with a reason on I/O failure.
  bool open_op_record(const std::string& path, std::string& why);
  // Opens the time series (queues.csv with switches, flow_series.csv,
  // ports.csv, classes.csv: sim/sampler.h) into DIR, with stats.interval.
  bool open_time_series(const std::string& dir, std::string& why);
  // Streams pfc.csv (and cc.csv with has_cc_log()) into DIR during run():
  // after each slice the rows before its end are written and leave memory
  // (pfc_events() then holds only the rest); close_streams() writes the last.
  bool open_event_logs(const std::string& dir, std::string& why);
  // Closes and renames every streamed output. False on an I/O error.
  bool close_streams();
  // The same, attempting every output even when one fails; a failed one's
  // .partial is removed and it is listed in failed.
  bool close_streams(std::vector<OutputFailure>& failed);

  // Runs to sim.duration (or until every flow is done with sim.stop_when_done),
  // in slices of simulated time; between slices it stops early when ctl says so.
  // Slicing does not change the result: the kernel resumes exactly where it stopped.
  RunResult run(const RunControl& ctl = {});
  // --check-invariants (sim/invariants.h): run() then checks the model at every
  // multiple of kInvariantSlicePs of simulated time and at its end, and the first
  // violation ends the run. Call before run().
  void check_invariants(bool on);
  // The checker (with its violation, if any), or null when not checking.
  const InvariantChecker* invariants() const { return m_inv.get(); }
  // pfc.csv: every XOFF/XON sent, pause start/end seen, watchdog event, in
  // time order (of the rows held in memory: all of them unless streamed).
  std::string pfc_csv() const;
  // cc.csv: every DCQCN reaction point event (rate, target, alpha), in time order.
  std::string cc_csv() const;
  // flows.hpcc.txt: the run's flows (one line each, all their bytes) in HPCC's flow-file format.
  std::string hpcc_flow_file() const;
  bool has_cc_log() const { return m_s.hosts.rc && m_s.hosts.dcqcn && m_s.hosts.cc_log; }
  const std::vector<pfc::Event>& pfc_events() const { return m_events; }
  // The run's first XOFF (switch PG or NIC receive buffer), kept as pfc.csv
  // streams the log out of memory; t_ps UINT64_MAX when there was none.
  struct FirstXoff {
    uint64_t t_ps = UINT64_MAX;
    std::string node;
    uint32_t port = 0;
    uint32_t prio = 0;
  };
  const FirstXoff& first_xoff() const;

  // switch.queue_impl rtl or lockstep: the clock edges every switch's RTL
  // has run (its configuration and free-list build included); 0 otherwise.
  uint64_t rtl_cycles() const;
  // --trace in rtl and lockstep modes: the RTL's signals (Verilator's FST
  // tracer, in simulated time: rtl::QmRtl::set_clock) of every switch that
  // `selected` names, each to STEM.rtl.SWITCH.fst with a GTKWave save file
  // STEM.rtl.SWITCH.gtkw beside it, for the edges in [from_ps, to_ps]. The
  // file names go to `files`; false with why when a save file cannot be
  // written (an FST is opened at its window's first edge).
  bool trace_rtl(const std::string& stem, const std::function<bool(const std::string&)>& selected, uint64_t from_ps,
                 uint64_t to_ps, std::vector<std::string>& files, std::string& why);

  // True when destroying the model writes nothing (no RTL queue managers,
  // whose destructors finish their waveforms and coverage files), so after
  // close_streams() a process may end without destroying it (tb/cli's fast
  // exit, docs/performance.md).
  bool teardown_writes_nothing() const { return m_rtl.empty(); }

  // switch.analytics (sim/analytics_run.h): null when off. open_analytics()
  // before run() writes the record files into DIR; finish_analytics() after
  // it exports what is left and writes flow_report.csv (both do nothing when off).
  FabricAnalytics* analytics() const { return m_analytics.get(); }
  bool open_analytics(const std::string& dir, std::string& why);
  void finish_analytics(uint64_t end_ps, std::vector<OutputFailure>& failed);

  const Scenario& scenario() const { return m_s; }
  const std::vector<host::FlowRecord>& flows() const { return m_flows; }
  const link::Ledger& ledger() const { return m_ledger; }
  const Sampler& sampler() const { return *m_sampler; }
  // Path recording (stats.paths, switch topologies), or null.
  const PathRecorder* paths() const { return m_paths.get(); }
  // Packet traces (stats.packet_trace, switch topologies), or null.
  const PacketTracer* packet_trace() const { return m_tracer.get(); }
  const std::vector<std::unique_ptr<host::Host>>& hosts() const { return m_hosts; }
  const std::vector<std::unique_ptr<sw::Switch>>& switches() const { return m_switches; }
  const std::vector<std::unique_ptr<link::Link>>& links() const { return m_links; }
  // Unloaded lower bound of a flow's completion time (see docs/outputs.md).
  uint64_t ideal_fct_ps(const host::FlowRecord& f) const;

  void on_flow_done(host::FlowRecord& f) override;
  void on_traced_rx(const host::Host& h, const packet::Packet& p) override;
  // stats.packet_trace: streams DIR/packet_trace.csv during run() (closed by
  // close_streams()); false with a reason on I/O failure. Nothing without a
  // selection or switches.
  bool open_packet_trace(const std::string& dir, std::string& why);

 private:
  link::Mac* find_mac(const std::string& node, uint32_t port, std::string& why) const;
  size_t frames_held() const;

  Scenario m_s;
  packet::PacketPool m_pool;
  link::Ledger m_ledger;
  std::vector<std::unique_ptr<host::Host>> m_hosts;
  std::vector<std::unique_ptr<TopoRoutes>> m_routes;
  std::vector<std::unique_ptr<sw::Switch>> m_switches;
  std::vector<int> m_sw_index;            // node index -> index into m_switches, or -1
  std::vector<std::unique_ptr<link::Link>> m_links;
  std::vector<host::FlowRecord> m_flows;
  std::vector<uint64_t> m_flow_base_ps;   // per flow: unloaded one-packet path latency
  std::vector<uint64_t> m_flow_bottleneck;  // per flow: lowest rate on its path
  std::vector<std::unique_ptr<link::PcapWriter>> m_pcaps;
  std::FILE* m_ops = nullptr;        // --record-ops
  std::string m_ops_path;
  std::unique_ptr<Sampler> m_sampler;  // the time series
  std::unique_ptr<PathRecorder> m_paths;  // stats.paths
  std::unique_ptr<PacketTracer> m_tracer;  // stats.packet_trace
  std::vector<pfc::Event> m_events;
  std::vector<host::CcSample> m_cc;
  std::unique_ptr<EventCsvStream> m_pfc_stream, m_cc_stream;  // open_event_logs()
  mutable FirstXoff m_first_xoff;
  void note_first_xoff() const;  // from the rows of m_events (before they are flushed)
  std::vector<uint32_t> m_waiting;                 // per flow: dependencies not yet complete
  std::vector<std::vector<uint32_t>> m_dependents; // per flow: flows waiting for it
  size_t m_flows_left = 0;
  std::unique_ptr<InvariantChecker> m_inv;  // --check-invariants
  std::vector<rtl::QmRtl*> m_rtl;           // rtl/lockstep: each switch's RTL (owned by the switch)
  std::unique_ptr<FabricAnalytics> m_analytics;  // switch.analytics
};

}  // namespace rocesim::sim
