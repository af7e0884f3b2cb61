// The time series of a run, sampled every stats.interval of simulated time
// (docs/outputs.md): queues.csv (switch queues), flow_series.csv (per flow,
// with stats.flow_series), ports.csv (per-port utilization, hosts and
// switches) and classes.csv (throughput per traffic class, i.e. per flow
// tag). One calendar timer; each sample reads counters the model keeps
// anyway, so sampling changes nothing in the model.
//
// To add a series: a FILE* and its path here, opened in open(), a row
// writer called from on_sample() (and from close() when the series covers
// the last, partial interval), closed in close().
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/calendar.h"
#include "ecn/marker.h"
#include "host/host.h"
#include "sim/output_file.h"
#include "sim/scenario.h"
#include "switch/switch.h"

namespace rocesim::sim {

class Sampler {
 public:
  Sampler(const Scenario& s, const std::vector<std::unique_ptr<host::Host>>& hosts,
          const std::vector<std::unique_ptr<sw::Switch>>& switches, const std::vector<host::FlowRecord>& flows);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Opens the series into DIR (none with stats.interval 0) and arms the first
  // sample; false with why on I/O failure.
  bool open(const std::string& dir, std::string& why);
  // flow_series.csv: closed first (the order close failures are listed in).
  void close_flow_series(std::vector<OutputFailure>& failed);
  // The rest: ports.csv and classes.csv get a last row for the interval from
  // the last sample to now (the run's end), so each integrates over the
  // whole run; then every file is closed and renamed.
  void close(std::vector<OutputFailure>& failed);

  bool has_queues() const { return !m_queues_path.empty(); }
  bool has_flow_series() const { return !m_flow_series_path.empty(); }
  bool has_ports() const { return !m_ports_path.empty(); }
  bool has_classes() const { return !m_classes_path.empty(); }

  // The class of a flow in classes.csv and the summary: its tag (the
  // generator's kind or CDF name), or "flows" for an explicit flows[] entry.
  static std::string class_of(const std::string& tag) { return tag.empty() ? "flows" : tag; }

  // Per port (hosts' ports first, then each switch's in port order, as
  // summary.json's "ports"): the highest utilization of any interval
  // (ports.csv's column); 0 without ports.csv.
  const std::vector<double>& peak_utilization() const { return m_peak_util; }

 private:
  // One MAC of the port table.
  struct Port {
    const char* node;
    const link::Mac* mac;
  };
  void on_sample();
  void sample_queues(uint64_t now);
  void sample_flows(uint64_t now);
  void sample_ports(uint64_t now);
  void sample_classes(uint64_t now);
  void note_errors();

  const Scenario& m_s;
  const std::vector<std::unique_ptr<host::Host>>& m_hosts;
  const std::vector<std::unique_ptr<sw::Switch>>& m_switches;
  const std::vector<host::FlowRecord>& m_flows;
  core::Timer m_ev;
  uint64_t m_last_ps = 0;  // time of the last sample

  // queues.csv
  std::FILE* m_queues = nullptr;
  std::string m_queues_path;
  int m_queues_errno = 0;  // first write error of each stream, for the report at close
  std::vector<size_t> m_queue_base;       // per switch: index of its port 0, queue 0 in the two below
  std::vector<uint64_t> m_last_deq;       // per switch queue: dequeued bytes at the last sample
  std::vector<ecn::Counters> m_last_ecn;  // per switch queue: ECN counters at the last sample

  // flow_series.csv
  std::FILE* m_flow_series = nullptr;
  std::string m_flow_series_path;
  int m_flow_series_errno = 0;
  std::vector<uint64_t> m_last_flow_bytes;

  // ports.csv
  std::FILE* m_ports = nullptr;
  std::string m_ports_path;
  int m_ports_errno = 0;
  std::vector<Port> m_port_list;
  std::vector<uint64_t> m_last_busy, m_last_tx, m_last_rx;  // per port, at the last sample
  std::vector<uint64_t> m_carry_ps;  // per port: wire time committed past the last sample
  std::vector<double> m_peak_util;

  // classes.csv
  std::FILE* m_classes = nullptr;
  std::string m_classes_path;
  int m_classes_errno = 0;
  std::vector<std::string> m_class_names;   // in order of first appearance among the flows
  std::vector<uint32_t> m_flow_class;       // per flow: index into m_class_names
  std::vector<uint32_t> m_by_start;         // flow ids by start time
  size_t m_next_start = 0;                  // m_by_start[m_next_start..] have not started
  std::vector<uint32_t> m_active;           // started flows not yet seen done
  std::vector<uint64_t> m_class_last;       // per flow: bytes received at the last sample (classes.csv)
  std::vector<uint64_t> m_class_bytes;      // per class: bytes received in this interval
  std::vector<uint64_t> m_class_done;       // per class: flows completed so far
  std::vector<uint64_t> m_class_done_shown; // per class: flows_completed of its last row
};

}  // namespace rocesim::sim
