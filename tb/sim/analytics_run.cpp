#include "sim/analytics_run.h"

#include <fstream>
#include <sstream>

#include "collector/collector.h"
#include "core/time.h"
#include "sim/outputs.h"

namespace rocesim::sim {

FabricAnalytics::FabricAnalytics(const Scenario& s, const std::vector<std::unique_ptr<sw::Switch>>& switches,
                                 const std::vector<uint32_t>& nodes)
    : m_s(s), m_switches(switches), m_nodes(nodes) {
  const AnalyticsSpec& a = s.sw.analytics;
  for (size_t i = 0; i < switches.size(); ++i) {
    const uint32_t ports = static_cast<uint32_t>(switches[i]->num_ports());
    auto an = std::make_unique<analytics::Analyzer>(switch_analytics(a, nodes[i], ports));
    for (const analytics::Rule& r : a.rules) an->add_rule(r);  // validated at load (mode, count, ranges)
    if (!a.ports.empty()) {
      for (uint32_t p = 0; p < ports; ++p) an->enable_port(p, false);
      for (uint32_t p : a.ports) an->enable_port(p, true);  // a port the switch lacks: ignored
    }
    // M-LAG members synchronize over their peer link (docs/analytics.md "M-LAG").
    const uint32_t pp = s.topo.peer_link_port(nodes[i]);
    if (pp != topology::kNoNode) {
      const topology::PortRef peer = s.topo.peer({nodes[i], pp});
      switches[i]->set_mlag_peer(pp, s.topo.mac_of(peer.node, peer.port));
      an->set_peer(pp, switches[i].get());
    }
    m_names.push_back(switches[i]->basename());
    m_an.push_back(std::move(an));
  }
  m_timer.bind<&FabricAnalytics::on_timer>(this);
  m_timer.at(a.enable_at_ps);
}

FabricAnalytics::~FabricAnalytics() {
  // An unfinished run (an error path): drop the partial files.
  if (m_jsonl) std::fclose(m_jsonl), std::remove((m_dir + "/flow_records.jsonl.partial").c_str());
  if (m_ipfix) std::fclose(m_ipfix), std::remove((m_dir + "/flow_records.ipfix.partial").c_str());
}

bool FabricAnalytics::open(const std::string& dir, std::string& why) {
  m_dir = dir;
  if (!open_stream(m_jsonl, dir + "/flow_records.jsonl", why)) return false;
  if (!open_stream(m_ipfix, dir + "/flow_records.ipfix", why)) return false;
  m_jw = std::make_unique<analytics::JsonlWriter>(m_jsonl);
  m_iw = std::make_unique<analytics::IpfixWriter>(m_ipfix);
  for (auto& an : m_an) {
    an->add_sink(m_jw.get());
    an->add_sink(m_iw.get());
  }
  return true;
}

void FabricAnalytics::on_timer() {
  const uint64_t now = core::now_ps();
  if (!m_started) {
    m_started = true;
    for (size_t i = 0; i < m_an.size(); ++i) m_switches[i]->set_analytics(m_an[i].get());
  }
  for (auto& an : m_an) an->advance(now);
  const uint64_t scan = m_s.sw.analytics.c.scan_interval_ps;
  m_timer.at(now - now % scan + scan);
}

void FabricAnalytics::finish(uint64_t end_ps, std::vector<OutputFailure>& failed) {
  if (m_finished) return;
  m_finished = true;
  m_timer.cancel();
  // A run that ended before enable_at analysed nothing: its analyzers hold no flows.
  for (auto& an : m_an) an->flush(end_ps);
  if (!m_jsonl) return;  // not opened: counted, nothing written
  m_iw->flush();
  close_stream(m_jsonl, m_dir + "/flow_records.jsonl", 0, failed);
  close_stream(m_ipfix, m_dir + "/flow_records.ipfix", 0, failed);
  // The collector, off-box: the JSON lines as written, joined on the topology.
  const std::string records = m_dir + "/flow_records.jsonl";
  std::ifstream in(records);
  std::vector<analytics::FlowRecord> recs;
  std::string err = in ? collector::read_records(in, "flow_records.jsonl", recs) : "cannot read " + records;
  if (!err.empty()) {
    failed.push_back({m_dir + "/flow_report.csv", err});
    return;
  }
  const std::vector<collector::FlowReport> flows = collector::join(recs, &m_s.topo);
  std::ostringstream o;
  collector::write_csv(o, flows, &m_s.topo);
  if (!write_file_atomic(m_dir + "/flow_report.csv", o.str(), err)) failed.push_back({m_dir + "/flow_report.csv", err});
}

}  // namespace rocesim::sim
