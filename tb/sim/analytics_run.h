// The flow analytics of a run (switch.analytics, issue 14, docs/analytics.md):
// one analytics::Analyzer per switch, its observation domain the switch's
// node index in the topology (the collector's contract, tb/collector), the
// record files every switch exports to, and the collector's report at the
// end of the run.
//
// Timing: a timer (core::Timer) fires at switch.analytics.enable_at and
// hands each switch its analyzer (sw::Switch::set_analytics); before it the
// switches mirror nothing, so connections set up earlier are not tracked.
// From then on the timer fires at every multiple of scan_interval and runs
// each analyzer's sweep due then (Analyzer::advance), so aging exports
// happen at their sweep time whether or not frames arrive (frames run the
// same sweeps first when they come earlier in the time step). finish()
// exports what is left (reason forced) at the end of the run.
//
// Files (open() into DIR; without open() the analyzers run and count, and
// nothing is written): DIR/flow_records.jsonl and DIR/flow_records.ipfix,
// the records of every switch in export order, each to NAME.partial and
// renamed by finish(); then DIR/flow_report.csv, the collector's join of
// the JSON lines read back from the file (as an off-box collector would),
// paths rebuilt on the topology.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analytics/analyzer.h"
#include "analytics/export.h"
#include "core/calendar.h"
#include "sim/output_file.h"
#include "sim/scenario.h"
#include "switch/switch.h"

namespace rocesim::sim {

class FabricAnalytics {
 public:
  // switches[i] is topology node nodes[i].
  FabricAnalytics(const Scenario& s, const std::vector<std::unique_ptr<sw::Switch>>& switches,
                  const std::vector<uint32_t>& nodes);
  FabricAnalytics(const FabricAnalytics&) = delete;
  FabricAnalytics& operator=(const FabricAnalytics&) = delete;
  ~FabricAnalytics();

  // Opens DIR/flow_records.{jsonl,ipfix}.partial; false with why on failure.
  bool open(const std::string& dir, std::string& why);
  // End of the run at end_ps: every analyzer flushes (reason forced), the
  // record files are closed and renamed, and flow_report.csv is written.
  // Failures are listed in failed. Once only (later calls do nothing).
  void finish(uint64_t end_ps, std::vector<OutputFailure>& failed);

  size_t size() const { return m_an.size(); }
  const analytics::Analyzer& analyzer(size_t i) const { return *m_an[i]; }
  uint32_t node(size_t i) const { return m_nodes[i]; }
  const std::string& name(size_t i) const { return m_names[i]; }
  const sw::Switch& switch_at(size_t i) const { return *m_switches[i]; }
  bool started() const { return m_started; }

 private:
  void on_timer();

  const Scenario& m_s;
  const std::vector<std::unique_ptr<sw::Switch>>& m_switches;
  std::vector<uint32_t> m_nodes;
  std::vector<std::string> m_names;
  std::vector<std::unique_ptr<analytics::Analyzer>> m_an;
  std::string m_dir;
  std::FILE* m_jsonl = nullptr;
  std::FILE* m_ipfix = nullptr;
  std::unique_ptr<analytics::JsonlWriter> m_jw;
  std::unique_ptr<analytics::IpfixWriter> m_iw;
  core::Timer m_timer;
  bool m_started = false, m_finished = false;
};

}  // namespace rocesim::sim
