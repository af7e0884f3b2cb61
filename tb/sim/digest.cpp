#include "sim/digest.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/outputs.h"
#include "sim/sampler.h"

namespace rocesim::sim {

namespace {

// The size buckets of summary.json's fct.by_size.
const uint64_t kBuckets[] = {10000, 100000, 1000000, 10000000, UINT64_MAX};

// Nearest rank (as fct.slowdown_p*): the ceil(p x n)-th smallest.
uint64_t nearest_rank(std::vector<uint64_t>& v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[rank ? rank - 1 : 0];
}

FctStats stats(std::vector<uint64_t> v, uint64_t max_bytes) {
  FctStats s;
  s.max_bytes = max_bytes;
  s.flows = v.size();
  if (v.empty()) return s;
  s.p50_ps = nearest_rank(v, 0.50);
  s.p99_ps = nearest_rank(v, 0.99);
  return s;
}

// "leaf" of "leaf12": the switch's tier (its role in the generated topologies).
std::string tier_of(const std::string& name) {
  size_t n = name.size();
  while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9') --n;
  return n ? name.substr(0, n) : name;
}

std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string pct_json(const FctStats& s, const char* which) {
  if (!s.flows) return std::string("\"") + which + "\": null";
  return std::string("\"") + which + "\": " + ps_to_ns_text(std::string(which) == "fct_p50_ns" ? s.p50_ps : s.p99_ps);
}

std::string size_label(uint64_t lo, uint64_t hi) {
  auto b = [](uint64_t v) {
    return v >= 1000000 ? std::to_string(v / 1000000) + "MB" : v >= 1000 ? std::to_string(v / 1000) + "KB"
                                                                        : std::to_string(v) + "B";
  };
  if (hi == UINT64_MAX) return ">=" + b(lo);
  if (lo == 0) return "<" + b(hi);
  return b(lo) + "-" + b(hi);
}

}  // namespace

Digest digest(const Fabric& f, const RunResult& r) {
  Digest d;
  d.sim_time_ps = r.sim_time_ps;
  const double sim_s = static_cast<double>(r.sim_time_ps) * 1e-12;
  const Scenario& s = f.scenario();

  // Classes: flows grouped by tag, in order of each class's first flow.
  std::vector<std::vector<uint64_t>> all, bucket;  // per class; per class x bucket
  const size_t nb = sizeof kBuckets / sizeof kBuckets[0];
  for (const host::FlowRecord& fr : f.flows()) {
    const std::string c = Sampler::class_of(s.flows[fr.id].tag);
    size_t k = 0;
    while (k < d.classes.size() && d.classes[k].name != c) ++k;
    if (k == d.classes.size()) {
      d.classes.push_back(ClassDigest{});
      d.classes.back().name = c;
      all.emplace_back();
      for (size_t b = 0; b < nb; ++b) bucket.emplace_back();
    }
    ClassDigest& cd = d.classes[k];
    ++cd.flows;
    cd.bytes_received += fr.bytes_received;
    ++d.flows_total;
    if (!fr.done()) continue;
    ++cd.completed;
    ++d.flows_completed;
    const uint64_t fct = fr.finish_ps - fr.start_ps;
    all[k].push_back(fct);
    for (size_t b = 0; b < nb; ++b)
      if (fr.total_bytes() < kBuckets[b]) {
        bucket[k * nb + b].push_back(fct);
        break;
      }
  }
  uint64_t bytes = 0;
  for (size_t k = 0; k < d.classes.size(); ++k) {
    ClassDigest& cd = d.classes[k];
    bytes += cd.bytes_received;
    cd.throughput_bps = sim_s > 0 ? static_cast<double>(cd.bytes_received) * 8 / sim_s : 0;
    cd.all = stats(all[k], UINT64_MAX);
    for (size_t b = 0; b < nb; ++b) cd.by_size.push_back(stats(bucket[k * nb + b], kBuckets[b]));
  }
  d.throughput_bps = sim_s > 0 ? static_cast<double>(bytes) * 8 / sim_s : 0;
  d.lossless_drops = f.ledger().dropped(packet::DropReason::headroom_overflow) +
                     f.ledger().dropped(packet::DropReason::pfc_watchdog);

  // Pause frames per tier.
  auto tier = [&](const std::string& t) -> Digest::Tier& {
    for (Digest::Tier& x : d.pause_by_tier)
      if (x.tier == t) return x;
    d.pause_by_tier.push_back({t, 0, 0});
    return d.pause_by_tier.back();
  };
  if (!f.hosts().empty()) {
    Digest::Tier& h = tier("host");
    for (const auto& hs : f.hosts()) {
      for (uint32_t p = 0; p < hs->num_ports(); ++p) {
        h.tx += hs->port_mac(p).stats().pause_tx;
        h.rx += hs->port_mac(p).stats().pause_rx;
      }
    }
  }
  for (const auto& sw : f.switches()) {
    Digest::Tier& t = tier(tier_of(sw->basename()));
    for (const auto& p : sw->ports) {
      t.tx += p->stats().pause_tx;
      t.rx += p->stats().pause_rx;
    }
  }
  d.first_xoff = f.first_xoff();

  // ECN, peak queue, peak buffer.
  for (const auto& sw : f.switches()) {
    for (uint32_t p = 0; p < sw->num_ports(); ++p)
      for (uint32_t q = 0; q < 8; ++q) {
        const ecn::Counters& ec = sw->ecn_counters(p, q);
        d.ecn_seen += ec.seen;
        d.ecn_marked += ec.marked;
        const uint64_t pk = sw->queue_stats_now(p, q).peak_bytes;
        if (pk > d.peak_queue.bytes) d.peak_queue = {sw->basename(), p, q, pk};
      }
    const uint64_t c = sw->mmu().total_peak();
    if (d.peak_buffer.node.empty() || c > d.peak_buffer.cells)
      d.peak_buffer = {sw->basename(), c, c * sw->config().buffer.cell_bytes};
  }
  d.ecn_mark_ratio = d.ecn_seen ? static_cast<double>(d.ecn_marked) / static_cast<double>(d.ecn_seen) : 0.0;
  for (size_t i = 1; i < static_cast<size_t>(packet::DropReason::count_); ++i) {
    const auto why = static_cast<packet::DropReason>(i);
    if (const uint64_t n = f.ledger().dropped(why)) d.drops.emplace_back(packet::drop_reason_name(why), n);
  }

  // Hottest ports: the highest peak utilization of any interval (ports.csv),
  // ties by the whole run's busy fraction, then in port order.
  const std::vector<double>& peak = f.sampler().peak_utilization();
  std::vector<Digest::Hot> ports;
  size_t i = 0;
  auto add = [&](const std::string& node, const link::Mac& mac) {
    const double pk = i < peak.size() ? peak[i] : 0.0;
    ++i;
    if (pk <= 0) return;
    double busy = r.sim_time_ps ? static_cast<double>(mac.stats().tx_busy_ps) / static_cast<double>(r.sim_time_ps) : 0;
    ports.push_back({node, mac.port(), pk, std::min(busy, 1.0)});
  };
  for (const auto& h : f.hosts())
    for (uint32_t p = 0; p < h->num_ports(); ++p) add(h->basename(), h->port_mac(p));
  for (const auto& sw : f.switches())
    for (const auto& p : sw->ports) add(sw->basename(), *p);
  std::stable_sort(ports.begin(), ports.end(), [](const Digest::Hot& a, const Digest::Hot& b) {
    return a.peak_utilization != b.peak_utilization ? a.peak_utilization > b.peak_utilization
                                                    : a.tx_busy_fraction > b.tx_busy_fraction;
  });
  if (ports.size() > 3) ports.resize(3);
  d.hottest = ports;
  return d;
}

std::string digest_json(const Digest& d) {
  std::ostringstream o;
  o << "  \"throughput_bps\": " << json_num(d.throughput_bps) << ",\n";
  o << "  \"lossless_drops\": " << d.lossless_drops << ",\n";
  o << "  \"classes\": [";
  for (size_t k = 0; k < d.classes.size(); ++k) {
    const ClassDigest& c = d.classes[k];
    o << (k ? ",\n" : "\n") << "    {\"class\": " << json_quote(c.name) << ", \"flows\": " << c.flows
      << ", \"completed\": " << c.completed << ", \"bytes_received\": " << c.bytes_received
      << ", \"throughput_bps\": " << json_num(c.throughput_bps) << ", " << pct_json(c.all, "fct_p50_ns") << ", "
      << pct_json(c.all, "fct_p99_ns") << ",\n      \"by_size\": [";
    for (size_t b = 0; b < c.by_size.size(); ++b) {
      const FctStats& s = c.by_size[b];
      o << (b ? ", " : "") << "{\"max_bytes\": "
        << (s.max_bytes == UINT64_MAX ? std::string("null") : std::to_string(s.max_bytes)) << ", \"flows\": " << s.flows
        << ", " << pct_json(s, "fct_p50_ns") << ", " << pct_json(s, "fct_p99_ns") << "}";
    }
    o << "]}";
  }
  o << (d.classes.empty() ? "],\n" : "\n  ],\n");
  o << "  \"pfc_by_tier\": [";
  for (size_t k = 0; k < d.pause_by_tier.size(); ++k)
    o << (k ? ", " : "") << "{\"tier\": " << json_quote(d.pause_by_tier[k].tier)
      << ", \"pause_frames_tx\": " << d.pause_by_tier[k].tx << ", \"pause_frames_rx\": " << d.pause_by_tier[k].rx << "}";
  o << "],\n";
  o << "  \"first_xoff\": ";
  if (d.first_xoff.t_ps == UINT64_MAX)
    o << "null,\n";
  else
    o << "{\"time_ns\": " << ps_to_ns_text(d.first_xoff.t_ps) << ", \"node\": " << json_quote(d.first_xoff.node)
      << ", \"port\": " << d.first_xoff.port << ", \"priority\": " << d.first_xoff.prio << "},\n";
  o << "  \"ecn_mark_ratio\": " << json_num(d.ecn_mark_ratio) << ",\n";
  o << "  \"peak_queue\": ";
  if (d.peak_queue.node.empty())
    o << "null,\n";
  else
    o << "{\"node\": " << json_quote(d.peak_queue.node) << ", \"port\": " << d.peak_queue.port
      << ", \"queue\": " << d.peak_queue.queue << ", \"bytes\": " << d.peak_queue.bytes << "},\n";
  o << "  \"peak_buffer\": ";
  if (d.peak_buffer.node.empty())
    o << "null,\n";
  else
    o << "{\"node\": " << json_quote(d.peak_buffer.node) << ", \"cells\": " << d.peak_buffer.cells
      << ", \"bytes\": " << d.peak_buffer.bytes << "},\n";
  o << "  \"hottest_ports\": [";
  for (size_t k = 0; k < d.hottest.size(); ++k)
    o << (k ? ", " : "") << "{\"node\": " << json_quote(d.hottest[k].node) << ", \"port\": " << d.hottest[k].port
      << ", \"peak_utilization\": " << json_num(d.hottest[k].peak_utilization)
      << ", \"tx_busy_fraction\": " << json_num(d.hottest[k].tx_busy_fraction) << "}";
  o << "],\n";
  return o.str();
}

std::string summary_table(const Digest& d, const Fabric& f, const RunResult& r, const std::string& dir,
                          const std::vector<std::string>& outputs) {
  // Two-space indented "label  value" lines under two headings; numbers as
  // summary.json has them, in the unit the label names.
  std::ostringstream o;
  const Scenario& s = f.scenario();
  auto line = [&](const std::string& label, const std::string& value) {
    o << "  " << label << std::string(label.size() < 20 ? 20 - label.size() : 1, ' ') << value << "\n";
  };
  o << "rocesim: scenario '" << s.name << "' seed " << s.seed << ": simulated " << ps_to_ns_text(r.sim_time_ps)
    << " ns in " << fixed(r.wall_time_s, 2) << " s wall ("
    << fixed(r.wall_time_s > 0 ? static_cast<double>(r.link_hops) / r.wall_time_s / 1e6 : 0.0, 2)
    << " M link hops per wall-second)\n";
  o << "user-facing\n";
  line("throughput", fixed(d.throughput_bps / 1e9, 3) + " Gbps payload delivered");
  line("flows completed", std::to_string(d.flows_completed) + " / " + std::to_string(d.flows_total));
  line("lossless drops", std::to_string(d.lossless_drops) + (d.lossless_drops ? "  (headroom_overflow + pfc_watchdog)" : ""));
  if (!d.classes.empty()) {
    o << "  FCT (us)            class       size        flows      p50        p99\n";
    char b[200];
    for (const ClassDigest& c : d.classes) {
      auto row = [&](const std::string& size, const FctStats& st) {
        if (!st.flows) return;
        std::snprintf(b, sizeof b, "                      %-11s %-11s %5" PRIu64 " %10.3f %10.3f\n", c.name.c_str(),
                      size.c_str(), st.flows, static_cast<double>(st.p50_ps) / 1e6, static_cast<double>(st.p99_ps) / 1e6);
        o << b;
      };
      row("all", c.all);
      uint64_t lo = 0;
      for (const FctStats& st : c.by_size) {
        row(size_label(lo, st.max_bytes), st);
        lo = st.max_bytes;
      }
    }
  }
  o << "internal\n";
  {
    std::string v;
    for (const Digest::Tier& t : d.pause_by_tier)
      v += (v.empty() ? "" : ", ") + t.tier + " tx " + std::to_string(t.tx) + " rx " + std::to_string(t.rx);
    line("pause frames", v.empty() ? "none" : v);
  }
  if (d.first_xoff.t_ps == UINT64_MAX)
    line("first XOFF", "none");
  else
    line("first XOFF", d.first_xoff.node + " port " + std::to_string(d.first_xoff.port) + " priority " +
                           std::to_string(d.first_xoff.prio) + " at " + ps_to_ns_text(d.first_xoff.t_ps) + " ns");
  line("ECN mark ratio", fixed(d.ecn_mark_ratio, 6) + " (" + std::to_string(d.ecn_marked) + " of " +
                             std::to_string(d.ecn_seen) + " packets marked)");
  line("peak queue", d.peak_queue.node.empty()
                         ? std::string("none")
                         : d.peak_queue.node + " port " + std::to_string(d.peak_queue.port) + " queue " +
                               std::to_string(d.peak_queue.queue) + ": " + std::to_string(d.peak_queue.bytes) + " B");
  line("peak buffer", d.peak_buffer.node.empty()
                          ? std::string("none")
                          : d.peak_buffer.node + ": " + std::to_string(d.peak_buffer.bytes) + " B (" +
                                std::to_string(d.peak_buffer.cells) + " cells)");
  {
    std::string v;
    for (const auto& [why, n] : d.drops) v += (v.empty() ? "" : ", ") + why + " " + std::to_string(n);
    line("drops by reason", v.empty() ? "none" : v);
  }
  {
    std::string v;
    for (const Digest::Hot& h : d.hottest)
      v += (v.empty() ? "" : ", ") + h.node + ":" + std::to_string(h.port) + " " + fixed(h.peak_utilization, 3);
    line("hottest links", v.empty() ? (s.stats.interval_ps ? "none" : "n/a (stats.interval 0)") : v + "  (peak utilization)");
  }
  if (r.deadlock) line("DEADLOCK", "no delivery since " + ps_to_ns_text(r.last_delivery_ps) + " ns");
  o << "outputs:";
  for (size_t k = 0; k < outputs.size(); ++k) o << (k ? ", " : " ") << dir << "/" << outputs[k];
  o << "\n";
  return o.str();
}

}  // namespace rocesim::sim
