#include "sim/sampler.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>

#include "core/time.h"

namespace rocesim::sim {

namespace {

// "1234.560" for 1234560 ps, into a buffer (no allocation per row).
int ns_text(char* b, size_t n, uint64_t ps) {
  return std::snprintf(b, n, "%" PRIu64 ".%03" PRIu64, ps / 1000, ps % 1000);
}

}  // namespace

Sampler::Sampler(const Scenario& s, const std::vector<std::unique_ptr<host::Host>>& hosts,
                 const std::vector<std::unique_ptr<sw::Switch>>& switches, const std::vector<host::FlowRecord>& flows)
    : m_s(s), m_hosts(hosts), m_switches(switches), m_flows(flows) {
  m_ev.bind<&Sampler::on_sample>(this);
}

Sampler::~Sampler() {
  for (std::FILE* f : {m_queues, m_flow_series, m_ports, m_classes})
    if (f) std::fclose(f);
}

bool Sampler::open(const std::string& dir, std::string& why) {
  if (m_s.stats.interval_ps == 0) return true;
  if (m_s.stats.flow_series) {
    m_flow_series_path = dir + "/flow_series.csv";
    if (!open_stream(m_flow_series, m_flow_series_path, why)) return false;
    std::fputs("time_ns,flow,src,dst,bytes_received,throughput_bps\n", m_flow_series);
    m_last_flow_bytes.assign(m_flows.size(), 0);
    m_ev.after(m_s.stats.interval_ps);
  }
  if (!m_switches.empty()) {
    m_queues_path = dir + "/queues.csv";
    if (!open_stream(m_queues, m_queues_path, why)) return false;
    std::fputs("time_ns,node,port,queue,depth_packets,depth_bytes,depth_cells,enq_packets,deq_packets,"
               "dropped_packets,deq_bytes_interval,buffer_used_cells,ecn_marked,ecn_mark_ratio\n",
               m_queues);
    // One slot per (switch, port, queue): a switch may have any number of ports.
    m_queue_base.clear();
    size_t slots = 0;
    for (const auto& sw : m_switches) {
      m_queue_base.push_back(slots);
      slots += sw->num_ports() * 8;
    }
    m_last_deq.assign(slots, 0);
    m_last_ecn.assign(slots, ecn::Counters{});
    m_ev.after(m_s.stats.interval_ps);
  }
  // The series added after queues.csv and flow_series.csv are opened after
  // them, and the timer is armed as before, so those two keep their bytes.
  m_ports_path = dir + "/ports.csv";
  if (!open_stream(m_ports, m_ports_path, why)) return false;
  std::fputs("time_ns,node,port,rate_bps,interval_ns,tx_busy_ns,utilization,tx_bytes,rx_bytes\n", m_ports);
  for (const auto& h : m_hosts)
    for (uint32_t p = 0; p < h->num_ports(); ++p) m_port_list.push_back({h->basename(), &h->port_mac(p)});
  for (const auto& sw : m_switches)
    for (const auto& p : sw->ports) m_port_list.push_back({sw->basename(), p.get()});
  m_last_busy.assign(m_port_list.size(), 0);
  m_last_tx.assign(m_port_list.size(), 0);
  m_last_rx.assign(m_port_list.size(), 0);
  m_carry_ps.assign(m_port_list.size(), 0);
  m_peak_util.assign(m_port_list.size(), 0.0);

  m_classes_path = dir + "/classes.csv";
  if (!open_stream(m_classes, m_classes_path, why)) return false;
  std::fputs("time_ns,class,interval_ns,bytes_received,throughput_bps,flows_completed\n", m_classes);
  m_flow_class.assign(m_flows.size(), 0);
  for (const host::FlowRecord& f : m_flows) {
    const std::string c = class_of(m_s.flows[f.id].tag);
    const auto it = std::find(m_class_names.begin(), m_class_names.end(), c);
    m_flow_class[f.id] = static_cast<uint32_t>(it - m_class_names.begin());
    if (it == m_class_names.end()) m_class_names.push_back(c);
  }
  m_by_start.resize(m_flows.size());
  for (uint32_t i = 0; i < m_flows.size(); ++i) m_by_start[i] = i;
  std::stable_sort(m_by_start.begin(), m_by_start.end(),
                   [&](uint32_t a, uint32_t b) { return m_flows[a].start_ps < m_flows[b].start_ps; });
  m_active.reserve(m_flows.size());
  m_class_last.assign(m_flows.size(), 0);
  m_class_bytes.assign(m_class_names.size(), 0);
  m_class_done.assign(m_class_names.size(), 0);
  m_class_done_shown.assign(m_class_names.size(), 0);
  m_ev.after(m_s.stats.interval_ps);
  return true;
}

void Sampler::on_sample() {
  const uint64_t now = core::now_ps();
  if (m_queues) sample_queues(now);
  if (m_flow_series) sample_flows(now);
  if (m_ports) sample_ports(now);
  if (m_classes) sample_classes(now);
  m_last_ps = now;
  note_errors();
  m_ev.after(m_s.stats.interval_ps);
}

void Sampler::note_errors() {
  // Keep why the first write failed (a full disk) for the report at close.
  auto note = [](std::FILE* f, int& e) {
    if (f && !e && std::ferror(f)) e = errno ? errno : EIO;
  };
  note(m_queues, m_queues_errno);
  note(m_flow_series, m_flow_series_errno);
  note(m_ports, m_ports_errno);
  note(m_classes, m_classes_errno);
}

void Sampler::sample_flows(uint64_t now) {
  // Per-flow receive throughput over the last interval, for flows that moved.
  char line[160];
  for (const host::FlowRecord& f : m_flows) {
    const uint64_t d = f.bytes_received - m_last_flow_bytes[f.id];
    if (!d) continue;
    m_last_flow_bytes[f.id] = f.bytes_received;
    std::snprintf(line, sizeof line, "%" PRIu64 ".%03" PRIu64 ",%u,h%u,h%u,%" PRIu64 ",%.0f\n", now / 1000, now % 1000,
                  f.id, f.src, f.dst, f.bytes_received,
                  static_cast<double>(d) * 8e12 / static_cast<double>(m_s.stats.interval_ps));
    std::fputs(line, m_flow_series);
  }
}

void Sampler::sample_queues(uint64_t now) {
  char line[256];
  for (size_t si = 0; si < m_switches.size(); ++si) {
    const sw::Switch& s = *m_switches[si];
    for (uint32_t p = 0; p < s.num_ports(); ++p) {
      for (uint32_t q = 0; q < 8; ++q) {
        const sw::QueueStats& qs = s.queue_stats(p, q);
        const size_t key = m_queue_base[si] + p * 8 + q;
        const uint64_t deq_bytes = qs.deq_bytes - m_last_deq[key];
        // Only queues that hold something or moved something since the last sample.
        if (qs.depth_packets == 0 && deq_bytes == 0) continue;
        m_last_deq[key] = qs.deq_bytes;
        const mmu::QueueCounters& qc = s.mmu().queue_counters(static_cast<uint16_t>(p), static_cast<uint8_t>(q));
        const ecn::Counters ec = s.ecn_counters(p, q);
        const ecn::Counters d = ec - m_last_ecn[key];
        m_last_ecn[key] = ec;
        std::snprintf(line, sizeof line,
                      "%" PRIu64 ".%03" PRIu64 ",%s,%u,%u,%u,%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                      ",%" PRIu64 ",%u,%" PRIu64 ",%.6f\n",
                      now / 1000, now % 1000, s.basename(), p, q, qs.depth_packets, qs.depth_bytes, qs.depth_cells,
                      qs.enq_packets, qs.deq_packets, qc.dropped.total_packets(), deq_bytes, s.mmu().total_used(),
                      ec.marked, d.seen ? static_cast<double>(d.marked) / static_cast<double>(d.seen) : 0.0);
        std::fputs(line, m_queues);
      }
    }
  }
}

void Sampler::sample_ports(uint64_t now) {
  // A MAC commits a frame's whole wire time (preamble to IFG) when the frame
  // starts (link::MacStats::tx_busy_ps), so tx_busy_ns is the wire time of
  // the frames started in the interval and sums to the whole run's. The
  // utilization spreads it over time: what the interval cannot hold is
  // carried into the next, so a port that is busy across a sample shows 1
  // in both intervals, never more.
  const uint64_t len = now - m_last_ps;
  char line[256], t[32], busy[32], iv[32];
  ns_text(t, sizeof t, now);
  ns_text(iv, sizeof iv, len);
  for (size_t i = 0; i < m_port_list.size(); ++i) {
    const link::MacStats& st = m_port_list[i].mac->stats();
    const uint64_t b = st.tx_busy_ps - m_last_busy[i], tx = st.tx_bytes - m_last_tx[i], rx = st.rx_bytes - m_last_rx[i];
    if (!b && !tx && !rx && !m_carry_ps[i]) continue;  // idle ports have no row
    m_last_busy[i] = st.tx_busy_ps;
    m_last_tx[i] = st.tx_bytes;
    m_last_rx[i] = st.rx_bytes;
    const uint64_t want = m_carry_ps[i] + b, used = std::min(want, len);
    m_carry_ps[i] = want - used;
    const double util = len ? static_cast<double>(used) / static_cast<double>(len) : 0.0;
    m_peak_util[i] = std::max(m_peak_util[i], util);
    ns_text(busy, sizeof busy, b);
    std::snprintf(line, sizeof line, "%s,%s,%u,%" PRIu64 ",%s,%s,%.6f,%" PRIu64 ",%" PRIu64 "\n", t,
                  m_port_list[i].node, m_port_list[i].mac->port(), m_port_list[i].mac->rate_bps(), iv, busy, util, tx,
                  rx);
    std::fputs(line, m_ports);
  }
}

void Sampler::sample_classes(uint64_t now) {
  // Only flows that have started and were not yet seen complete are looked
  // at: a sample costs the flows in progress, not all of the run's.
  while (m_next_start < m_by_start.size() && m_flows[m_by_start[m_next_start]].start_ps <= now)
    m_active.push_back(m_by_start[m_next_start++]);
  std::fill(m_class_bytes.begin(), m_class_bytes.end(), 0);
  for (size_t k = 0; k < m_active.size();) {
    const host::FlowRecord& f = m_flows[m_active[k]];
    m_class_bytes[m_flow_class[f.id]] += f.bytes_received - m_class_last[f.id];
    m_class_last[f.id] = f.bytes_received;
    if (f.done()) {
      ++m_class_done[m_flow_class[f.id]];
      m_active[k] = m_active.back();
      m_active.pop_back();
    } else {
      ++k;
    }
  }
  const uint64_t len = now - m_last_ps;
  char line[256], t[32], iv[32];
  ns_text(t, sizeof t, now);
  ns_text(iv, sizeof iv, len);
  for (size_t c = 0; c < m_class_names.size(); ++c) {
    // Only classes that received data or completed a flow in the interval:
    // an idle class (or run) writes nothing.
    if (!m_class_bytes[c] && m_class_done[c] == m_class_done_shown[c]) continue;
    m_class_done_shown[c] = m_class_done[c];
    const double bps = len ? static_cast<double>(m_class_bytes[c]) * 8e12 / static_cast<double>(len) : 0.0;
    std::snprintf(line, sizeof line, "%s,", t);
    std::fputs(line, m_classes);
    std::fputs(m_class_names[c].c_str(), m_classes);
    std::snprintf(line, sizeof line, ",%s,%" PRIu64 ",%.0f,%" PRIu64 "\n", iv, m_class_bytes[c], bps, m_class_done[c]);
    std::fputs(line, m_classes);
  }
}

void Sampler::close_flow_series(std::vector<OutputFailure>& failed) {
  close_stream(m_flow_series, m_flow_series_path, m_flow_series_errno, failed);
}

void Sampler::close(std::vector<OutputFailure>& failed) {
  // The last, partial interval (also when it is empty: counters may have
  // moved at the time of the last sample, after it ran).
  const uint64_t now = core::now_ps();
  if (m_ports) sample_ports(now);
  if (m_classes && (now > m_last_ps || !m_active.empty() || m_next_start < m_by_start.size())) sample_classes(now);
  m_last_ps = now;
  note_errors();
  close_stream(m_queues, m_queues_path, m_queues_errno, failed);
  close_stream(m_ports, m_ports_path, m_ports_errno, failed);
  close_stream(m_classes, m_classes_path, m_classes_errno, failed);
}

}  // namespace rocesim::sim
