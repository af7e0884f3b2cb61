// The fabric's output writers: captures, the operation record, the time
// series (sim/sampler.h), the event logs (pfc.csv, cc.csv), the HPCC flow
// file, RTL waveforms, and closing every streamed file.
#include "sim/fabric.h"

#if ROCESIM_HAVE_RTL
#include "qm_rtl.h"
#endif

#include <cerrno>
#include <cstring>
#include <sstream>

#include "sim/outputs.h"
#include "sim/packet_trace.h"
#include "sim/sampler.h"

namespace rocesim::sim {

bool Fabric::trace_rtl(const std::string& stem, const std::function<bool(const std::string&)>& selected,
                       uint64_t from_ps, uint64_t to_ps, std::vector<std::string>& files, std::string& why) {
#if ROCESIM_HAVE_RTL
  // The driver's ports (rtl/qm/qm.sv), grouped as docs/rtl.md lists them.
  static const char* const kGroups[][2] = {
      {"operation", "clk rst op_valid op_ready op_kind op_in_port op_pg op_out_port op_queue op_cells op_bytes "
                    "op_lossless op_ecn_frame op_ecn op_rand32 op_discard"},
      {"result", "res_valid res_kind res_error res_verdict res_lossless res_in_headroom res_head_cell res_cells "
                 "res_bytes res_in_port res_pg res_out_port res_queue res_in_reserved res_in_shared res_headroom "
                 "res_eg_reserved res_eg_shared res_pg_reserved res_pg_shared res_pg_headroom res_pg_threshold res_pfc "
                 "res_ecn_decided res_ecn_fired res_ecn_mark res_ecn_drew res_cycles"},
      {"engine", "busy idle"}};
  for (size_t i = 0; i < m_rtl.size() && i < m_switches.size(); ++i) {
    const std::string name = m_switches[i]->basename();
    if (!selected(name)) continue;
    const std::string fst = stem + ".rtl." + name + ".fst", gtkw = stem + ".rtl." + name + ".gtkw";
    std::string g = "[*] rocesim RTL waveform of " + name + " (docs/waveforms.md): gtkwave " + fst + " " + gtkw + "\n";
    g += "[dumpfile] \"" + fst + "\"\n";
    for (const auto& grp : kGroups) {
      g += "@800200\n-" + std::string(grp[0]) + "\n@28\n";
      std::istringstream sigs(grp[1]);
      for (std::string sg; sigs >> sg;) g += "qm." + sg + "\n";  // the model's top scope (Vqm named "qm")
      g += "@1000200\n-" + std::string(grp[0]) + "\n";
    }
    if (!write_file_atomic(gtkw, g, why)) return false;
    m_rtl[i]->trace(fst, from_ps, to_ps);
    files.push_back(fst);
    files.push_back(gtkw);
  }
  return true;
#else
  (void)stem, (void)selected, (void)from_ps, (void)to_ps, (void)files, (void)why;
  return true;
#endif
}

bool Fabric::open_pcaps(const std::vector<PcapRequest>& reqs, const std::string& dir, std::string& why) {
  for (const PcapRequest& r : reqs) {
    link::Mac* mac = find_mac(r.node, r.port, why);
    const std::string base = dir + "/" + r.node + "-p" + std::to_string(r.port);
    auto rx = std::make_unique<link::PcapWriter>(base + "-rx.pcap", r.snaplen);
    auto tx = std::make_unique<link::PcapWriter>(base + "-tx.pcap", r.snaplen);
    if (!rx->open() || !tx->open()) {
      why = "cannot write " + base + "-*.pcap: " + std::strerror(errno);
      return false;
    }
    mac->set_pcap(rx.get(), tx.get());
    m_pcaps.push_back(std::move(rx));
    m_pcaps.push_back(std::move(tx));
  }
  return true;
}

bool Fabric::open_op_record(const std::string& path, std::string& why) {
  m_ops_path = path;
  m_ops = std::fopen((path + ".partial").c_str(), "w");
  if (!m_ops) {
    why = "--record-ops " + path + ": cannot write " + path + ".partial: " + std::strerror(errno);
    return false;
  }
  std::string head = "rocesim-qm-ops 1\n# scenario " + m_s.name + ", seed " + std::to_string(m_s.seed) +
                     "; format: tlm/qm/ops_file.h; replay: qm_replay FILE\n";
  for (size_t i = 0; i < m_switches.size(); ++i)
    head += qm::config_text(static_cast<uint32_t>(i), m_switches[i]->basename(), m_switches[i]->qm_model().config());
  std::fputs(head.c_str(), m_ops);
  for (size_t i = 0; i < m_switches.size(); ++i) m_switches[i]->record_ops(m_ops, static_cast<uint32_t>(i));
  return true;
}

bool Fabric::open_time_series(const std::string& dir, std::string& why) { return m_sampler->open(dir, why); }

std::string Fabric::hpcc_flow_file() const {
  // HPCC's traffic format (count, then "src dst pg dport size start_s"), one
  // line per flow with all its bytes (HPCC has no messages within a flow), so
  // the run's flows replay in other simulators.
  std::vector<traffic::Flow> v;
  for (const host::FlowRecord& r : m_flows) {
    traffic::Flow f;
    f.src = r.src;
    f.dst = r.dst;
    f.size_bytes = r.total_bytes();
    f.start_ps = m_s.flows[r.id].start_ps;
    f.pcp = r.pcp;
    f.dscp = r.dscp;
    f.dport = static_cast<uint16_t>(m_s.flows[r.id].dport);
    v.push_back(f);
  }
  // An HPCC topology (kind hpcc): hosts by the topology file's node ids.
  std::vector<uint32_t> ids;
  if (!m_s.topo.file_ids.empty())
    for (uint32_t node : m_s.topo.hosts) ids.push_back(m_s.topo.file_ids[node]);
  std::ostringstream o;
  traffic::write_flows(o, v, ids.empty() ? nullptr : &ids);
  return o.str();
}

std::string Fabric::cc_csv() const { return event_csv(m_cc, kCcCsvHeader); }

std::string Fabric::pfc_csv() const { return event_csv(m_events, kPfcCsvHeader); }

bool Fabric::open_event_logs(const std::string& dir, std::string& why) {
  m_pfc_stream = std::make_unique<EventCsvStream>();
  if (!m_pfc_stream->open(dir + "/pfc.csv", kPfcCsvHeader, why)) return false;
  if (!has_cc_log()) return true;
  m_cc_stream = std::make_unique<EventCsvStream>();
  return m_cc_stream->open(dir + "/cc.csv", kCcCsvHeader, why);
}

bool Fabric::close_streams() {
  std::vector<OutputFailure> failed;
  return close_streams(failed);
}


bool Fabric::close_streams(std::vector<OutputFailure>& failed) {
  const size_t before = failed.size();
  // Every output is attempted: one failure does not keep the others as .partial.
  for (auto& p : m_pcaps) {
    errno = 0;
    if (p->close()) continue;
    const int err = errno;
    std::remove((p->path() + ".partial").c_str());
    failed.push_back({p->path(), err ? std::strerror(err) : "write error"});
  }
  m_sampler->close_flow_series(failed);
  close_stream(m_ops, m_ops_path, 0, failed);
  m_sampler->close(failed);
  note_first_xoff();  // before the rows leave memory
  if (m_pfc_stream) m_pfc_stream->close(m_events, failed);
  if (m_cc_stream) m_cc_stream->close(m_cc, failed);
  if (m_tracer) m_tracer->close(failed);
  return failed.size() == before;
}

bool Fabric::open_packet_trace(const std::string& dir, std::string& why) {
  return !m_tracer || m_tracer->open(dir + "/packet_trace.csv", why);
}

void Fabric::on_traced_rx(const host::Host& h, const packet::Packet& p) {
  if (m_tracer) m_tracer->on_receive(h.basename(), p);
}

}  // namespace rocesim::sim
