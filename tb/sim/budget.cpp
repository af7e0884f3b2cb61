#include "sim/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "core/units.h"

namespace rocesim::sim {

namespace {

// Resident bytes of the model's fixed structures, measured as the peak RSS
// (/usr/bin/time -v) of `rocesim run --set sim.duration=1ns` on rings,
// single switches and fat-trees of several sizes (fitted per term; see
// docs/config.md "Limits" for the calibration and its accuracy).
constexpr double kBase = 7.5 * (1 << 20);         // the process: SystemC, libraries, scenario (refitted once libsystemc's 3 MiB temp heap was trimmed, December 2026)
constexpr double kPerHost = 19.0 * 1024;          // NIC model, its MAC and cable
constexpr double kPerSwitch = 36.0 * 1024;        // pipeline, MMU, scheduler state
// Per buffer cell nothing is written at construction (tlm/qm, tlm/buffer:
// the per-cell arrays are zero pages, touched only up to the peak occupancy);
// a cell in use costs its next-cell pointer and its buffer block index (4 B
// each), counted with the traffic (the switch keeps its queued frames in
// lists through the frames, nothing per cell).
constexpr double kPerUsedCell = 4.0 + 4.0;
constexpr double kPerSwitchPort = 17.0 * 1024;    // MAC, queues, ECN, shapers, half a link (refitted 7 December 2026: pause rings allocated at first use)
// queues.csv keeps the last sample of every switch queue (8 per port: deq bytes, ECN counters).
constexpr double kPerPortSeries = 8.0 * 56;
// A route: the topology's entry (twice: the scenario and the fabric's copy)
// and its hash-table slots (load <= 1/2).
constexpr double kPerRoute = 2 * 12.0 + 4 * 8.0;
constexpr double kPerFlow = 2048.0;               // flow record, both QPs, the outputs' lines
constexpr double kPacketDescriptor = 768.0;       // a packet::Packet in the pool
constexpr double kPcapWriter = 72.0 * 1024;       // stdio buffer + one frame
// Output rows (typical line lengths, rounded up).
constexpr double kQueueRow = 96, kFlowSeriesRow = 64, kFlowRow = 256, kHpccRow = 48, kFctRow = 64, kPortRow = 80, kClassRow = 64;
// A paths.csv row and a packet_trace.csv row, at most.
constexpr double kPathRow = 80, kTraceRow = 200;
// switch.analytics (tlm/analytics): a flow entry (sizeof of Analyzer::Flow),
// an index slot, a pending REQ; a record's JSON line (at most, with four loss
// times per direction) and IPFIX data record; a flow_report.csv row.
constexpr double kAnalyticsFlow = 632, kAnalyticsSlot = 20, kAnalyticsPending = 40;
constexpr double kRecordJson = 1100, kRecordIpfix = 260, kReportRow = 200;

uint64_t sat(double v) {
  if (!(v > 0)) return 0;
  if (v >= 1.8e19) return UINT64_MAX;
  return static_cast<uint64_t>(v);
}

std::string num(double v) {
  char b[32];
  if (v < 1e6 && v == std::floor(v))
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

void add(std::vector<EstimateItem>& v, const std::string& what, double bytes, const std::string& detail) {
  if (bytes <= 0) return;
  v.push_back(EstimateItem{what, sat(bytes), detail});
}

uint64_t total(std::vector<EstimateItem>& v) {
  std::stable_sort(v.begin(), v.end(), [](const EstimateItem& a, const EstimateItem& b) { return a.bytes > b.bytes; });
  uint64_t t = 0;
  for (const EstimateItem& i : v) t = t > UINT64_MAX - i.bytes ? UINT64_MAX : t + i.bytes;
  return t;
}

std::string text(const char* what, uint64_t tot, const std::vector<EstimateItem>& v, size_t terms) {
  std::string o = std::string(what) + " ~" + bytes_text(tot);
  if (v.empty()) return o;
  o += " (";
  for (size_t i = 0; i < v.size() && i < terms; ++i) {
    if (i) o += ", ";
    o += v[i].what + " " + v[i].detail + " = " + bytes_text(v[i].bytes);
  }
  if (v.size() > terms) o += ", ...";
  return o + ")";
}

// Largest ratio of a pcap record (16 B header + min(snap, frame without FCS))
// to the frame's wire time in bytes (frame + preamble/SFD 8 + IFG 12) over
// every Ethernet frame length 64..9216: a capture direction writes at most
// this fraction of line rate.
double pcap_ratio(uint32_t snap) {
  double r = 0;
  for (uint32_t f = 64; f <= 9216; ++f)
    r = std::max(r, (16.0 + std::min<double>(snap, f - 4)) / (f + 20.0));
  return r;
}

}  // namespace

std::string bytes_text(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char o[32];
  if (u == 0)
    std::snprintf(o, sizeof o, "%.0f B", v);
  else
    std::snprintf(o, sizeof o, "%.3g %s", v, units[u]);
  return o;
}

std::string Estimate::memory_text(size_t terms) const { return text("memory", memory_bytes, memory, terms); }
std::string Estimate::output_text(size_t terms) const { return text("output", output_bytes, output, terms); }

Estimate estimate(const Scenario& s, const std::vector<CaptureSpec>& captures, uint32_t snaplen) {
  Estimate e;
  const topology::Topology& T = s.topo;
  const double hosts = s.num_hosts();
  const double switches = static_cast<double>(T.switches.size());
  double ports = 0, routes = 0, buffer_bytes = 0;
  for (uint32_t n : T.switches) {
    ports += T.nodes[n].ports;
    routes += static_cast<double>(T.routes[n].size());
  }
  const double cells = static_cast<double>(s.sw.buffer_bytes / s.sw.cell_bytes);
  buffer_bytes = switches * cells * s.sw.cell_bytes;
  const double flows = static_cast<double>(s.flows.size());
  double traffic = 0, packets = 0;
  std::set<uint32_t> prios;
  for (const FlowSpec& f : s.flows) {
    const double msg = static_cast<double>(f.message_bytes);
    traffic += msg * f.messages;
    packets += std::ceil(msg / s.hosts.mtu) * f.messages;
    prios.insert(f.pcp);
  }
  if (s.hosts.rc && s.hosts.dcqcn && !s.flows.empty()) prios.insert(s.hosts.dcqcn_cfg.cnp_priority);
  const bool series = s.stats.interval_ps != 0;
  const double samples = series ? std::floor(static_cast<double>(s.sim.duration_ps) / s.stats.interval_ps) : 0;

  // Memory.
  add(e.memory, "process", kBase, "base");
  add(e.memory, "hosts", hosts * kPerHost, num(hosts) + " x " + bytes_text(sat(kPerHost)));
  add(e.memory, "switches", switches * kPerSwitch, num(switches) + " x " + bytes_text(sat(kPerSwitch)));
  add(e.memory, "switch ports", ports * kPerSwitchPort, num(ports) + " x " + bytes_text(sat(kPerSwitchPort)));
  if (series) add(e.memory, "queue samples", ports * kPerPortSeries, num(ports) + " ports x " + bytes_text(sat(kPerPortSeries)));
  add(e.memory, "routes", routes * kPerRoute, num(routes) + " x " + num(kPerRoute) + " B");
  // Whether a switch sprays (paths.csv then has a row per frame and hop, below).
  bool spray = false;
  {
    // ECMP bucket tables (selection: table): per group of more than one
    // member, 2^table_bits buckets of two 16-bit words (member, home).
    double tables = 0, table_bytes = 0;
    for (uint32_t n : T.switches) {
      const ecmp::Config c = switch_ecmp(s.sw.ecmp, T.nodes[n], s.seed);
      spray |= c.dlb.mode == ecmp::DlbMode::spray_random || c.dlb.mode == ecmp::DlbMode::spray_round_robin;
      if (c.selection != ecmp::Selection::table) continue;
      for (const topology::Group& g : T.groups[n]) {
        if (g.ports.size() < 2) continue;
        tables += 1;
        table_bytes += 4.0 * static_cast<double>(1u << c.table_bits);
      }
    }
    if (tables > 0) add(e.memory, "ECMP bucket tables", table_bytes, num(tables) + " tables");
  }
  add(e.memory, "flows", flows * kPerFlow, num(flows) + " x " + bytes_text(sat(kPerFlow)));
  const AnalyticsSpec& an = s.sw.analytics;
  if (an.enabled && switches > 0) {
    // switch.analytics: per switch its flow table (an entry and at most 8
    // index slots per flow: docs/analytics.md "Memory") and pending table
    // (an entry and at most 4 slots per REQ), allocated at construction.
    const double per = static_cast<double>(an.c.table_capacity) * (kAnalyticsFlow + 8 * kAnalyticsSlot) +
                       static_cast<double>(an.c.pending_capacity) * (kAnalyticsPending + 4 * kAnalyticsSlot);
    add(e.memory, "analytics tables", switches * per, num(switches) + " switches x " + bytes_text(sat(per)));
  }
  {
    // Cells a frame of a full MTU occupies, and the traffic in such frames.
    const double frame = s.max_frame_bytes();
    const double frame_cells = std::ceil(frame / s.sw.cell_bytes);
    const double in_cells = std::min(buffer_bytes / s.sw.cell_bytes, packets * frame_cells);
    if (in_cells > 0) {
      // Frames that fill those cells: each a packet descriptor and at most a
      // cell's block of header bytes in the buffer (tlm/buffer/buffer.h).
      const double held = in_cells / frame_cells;
      add(e.memory, "buffered traffic", in_cells * kPerUsedCell + held * (kPacketDescriptor + s.sw.cell_bytes),
          "min(" + num(switches) + " buffers x " + num(cells) + " cells, " + bytes_text(sat(traffic)) +
              " of flows) x " + num(kPerUsedCell) + " B + descriptors and header blocks");
    }
  }
  add(e.memory, "capture writers", 2.0 * captures.size() * kPcapWriter,
      num(2.0 * captures.size()) + " x " + bytes_text(sat(kPcapWriter)));
  e.memory_bytes = total(e.memory);

  // Output.
  const double dur_s = static_cast<double>(s.sim.duration_ps) * 1e-12;
  if (series && !T.switches.empty() && !prios.empty())
    add(e.output, "queues.csv", samples * ports * prios.size() * kQueueRow,
        num(samples) + " samples x " + num(ports) + " ports x " + num(static_cast<double>(prios.size())) +
            " queues x " + num(kQueueRow) + " B");
  if (series && s.stats.flow_series)
    add(e.output, "flow_series.csv", std::min(samples * flows, packets) * kFlowSeriesRow,
        "min(" + num(samples) + " samples x " + num(flows) + " flows, " + num(packets) + " packets) x " +
            num(kFlowSeriesRow) + " B");
  if (series) {
    // ports.csv: a row per port and interval in which it sent or received,
    // at most every port every interval, and at most two ports (the sender
    // and the receiver of a hop) per frame hop: packets x 8 hops, doubled
    // for ACKs, CNPs and pause frames. The last, partial interval has rows too.
    const double all_ports = ports + hosts;
    add(e.output, "ports.csv", std::min((samples + 1) * all_ports, packets * 2 * 8 * 2) * kPortRow,
        "min(" + num(samples + 1) + " samples x " + num(all_ports) + " ports, " + num(packets) + " packets x 32) x " +
            num(kPortRow) + " B");
    // classes.csv: a row per traffic class (flow tag) and interval in which
    // its flows received data or one completed: at most a row per packet or flow.
    std::set<std::string> classes;
    for (const FlowSpec& f : s.flows) classes.insert(f.tag);
    add(e.output, "classes.csv", std::min((samples + 1) * static_cast<double>(classes.size()), packets + flows) * kClassRow,
        "min(" + num(samples + 1) + " samples x " + num(static_cast<double>(classes.size())) + " classes, " +
            num(packets + flows) + " packets and flows) x " + num(kClassRow) + " B");
  }
  {
    const uint32_t snap = snaplen == kSnapHeaders ? 96 : snaplen;  // headers: at most 96 B before the payload
    const double r = pcap_ratio(snap);
    double bytes = 0;
    for (const CaptureSpec& c : captures) bytes += 2 * (24 + static_cast<double>(c.rate_bps) / 8 * dur_s * r);
    add(e.output, "captures", bytes,
        num(2.0 * captures.size()) + " directions x line rate x " + core::format_time(s.sim.duration_ps) + " x " +
            num(r));
  }
  add(e.output, "flows.csv", flows * (kFlowRow + kHpccRow + kFctRow),
      num(flows) + " flows x " + num(kFlowRow + kHpccRow + kFctRow) + " B");
  if (an.enabled && switches > 0) {
    // Records: per switch at most min(flows, table) flows at a time, each
    // exported every active_timeout and at its end; a JSON line and an IPFIX
    // record each (flow_report.csv adds a row per flow).
    const double per_switch = std::min(flows, static_cast<double>(an.c.table_capacity)) *
                              (std::floor(static_cast<double>(s.sim.duration_ps) / an.c.active_timeout_ps) + 2);
    add(e.output, "flow records", switches * per_switch * (kRecordJson + kRecordIpfix) + flows * kReportRow,
        num(switches) + " switches x " + num(per_switch) + " records x " + num(kRecordJson + kRecordIpfix) + " B");
  }
  if (switches > 0 && s.stats.paths) {
    // paths.csv: a row per flow, direction (4) and hop (at most 8 counted)
    // while flows keep their way; spraying moves per packet, a row per data
    // and ACK frame and hop. The rows are held until the end (64 B each).
    const double rows = flows * 4 * 8 + (spray ? packets * 2 * 8 : 0);
    add(e.output, "paths.csv", rows * kPathRow, num(rows) + " rows x " + num(kPathRow) + " B");
    add(e.memory, "path rows", rows * 64 + flows * 5 * 48, num(rows) + " rows x 64 B");
  }
  if (switches > 0 && s.stats.packet_trace.any()) {
    // packet_trace.csv: the traced share of the data packets (every packet
    // of the flows named, `sample` of the rest), a row per switch (at most
    // 8) and one at the receiver.
    double named = 0;
    const PacketTraceSpec& t = s.stats.packet_trace;
    for (size_t i = 0; i < s.flows.size(); ++i)
      if (t.names(i, s.flows[i].tag))
        named += std::ceil(static_cast<double>(s.flows[i].message_bytes) / s.hosts.mtu) * s.flows[i].messages;
    const double traced = std::min(packets, named + t.sample * (packets - named));
    add(e.output, "packet_trace.csv", traced * 9 * kTraceRow, num(traced) + " packets x 9 rows x " + num(kTraceRow) + " B");
  }
  e.output_bytes = total(e.output);
  return e;
}

std::string check_budget(const Scenario& s, const Estimate& e, std::string& key) {
  if (s.sim.max_memory_bytes && e.memory_bytes > s.sim.max_memory_bytes) {
    key = "sim.max_memory";
    return "estimated " + e.memory_text() + " exceeds sim.max_memory " + bytes_text(s.sim.max_memory_bytes) +
           ": make the run smaller or raise sim.max_memory";
  }
  if (s.sim.max_output_bytes && e.output_bytes > s.sim.max_output_bytes) {
    key = "sim.max_output";
    return "estimated " + e.output_text() + " exceeds sim.max_output " + bytes_text(s.sim.max_output_bytes) +
           ": lengthen stats.interval, shorten sim.duration, capture less (--pcap-snaplen) or raise sim.max_output";
  }
  key.clear();
  return "";
}

}  // namespace rocesim::sim
