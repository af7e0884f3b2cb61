#include "sim/traffic_config.h"


#include "core/units.h"
#include "sim/config_util.h"
#include "sim/scenario.h"

namespace rocesim::sim {

using core::CfgNode;

namespace {

// A host list: `all`, a list of names, or a range "h3-h9".
std::vector<uint32_t> host_list(const CfgNode& n, const std::string& key, uint32_t hosts) {
  std::vector<uint32_t> out;
  if (!n.has(key)) {
    (void)n.seq(key);
    return out;
  }
  const CfgNode c = n.child(key);
  if (!c.is_seq()) {
    const std::string v = n.str(key);
    if (v == "all") {
      for (uint32_t i = 0; i < hosts; ++i) out.push_back(i);
      return out;
    }
    const size_t dash = v.find('-');
    if (dash == std::string::npos) n.fail_key(key, "expected all, a list of hosts or a range such as h0-h15");
    const uint32_t a = host_ref(n, key, v.substr(0, dash), hosts), b = host_ref(n, key, v.substr(dash + 1), hosts);
    if (b < a) n.fail_key(key, "a range goes up: " + v);
    for (uint32_t i = a; i <= b; ++i) out.push_back(i);
    return out;
  }
  for (const CfgNode& e : n.seq(key)) {
    uint32_t i = 0;
    if (!parse_host_name(e.as_str(), i) || i >= hosts) e.fail("expected a host of this topology, got '" + e.as_str() + "'");
    out.push_back(i);
  }
  return out;
}

traffic::Cdf cdf_of(const CfgNode& n, const std::string& scenario_file) {
  const std::string name = n.str("cdf", "websearch");
  if (auto b = traffic::Cdf::builtin(name)) return *b;
  const std::string path = resolve_relative(scenario_file, name);
  try {
    return traffic::read_cdf_file(path, n.path() + ".cdf");
  } catch (const core::ConfigError& e) {
    if (e.where() == path && e.key_path() == n.path() + ".cdf")  // the file cannot be read
      n.fail_key("cdf", "'" + name + "' is not a built-in CDF (" + traffic::Cdf::builtin_names() +
                            ") and not a readable file: " + e.reason());
    throw;
  }
}

}  // namespace

std::vector<traffic::Flow> read_traffic(const CfgNode& root, const Scenario& s, std::vector<TrafficEntry>& entries) {
  std::vector<traffic::Flow> all;
  const uint32_t H = s.num_hosts();
  std::vector<uint64_t> rates;
  for (uint32_t h = 0; h < H; ++h) rates.push_back(s.host_rate(h));
  const traffic::Hosts hosts(rates);
  size_t idx = 0;
  for (const CfgNode& n : root.seq("traffic")) {
    const std::string kind =
        n.choice("kind", "", {"long", "incast", "background", "cdf", "allreduce", "alltoall", "flow_file"});
    if (kind.empty()) n.fail_key("kind", "missing required key");
    const uint8_t pcp = static_cast<uint8_t>(n.integer("pcp", s.hosts.pcp, 0, 7));
    const uint8_t dscp = static_cast<uint8_t>(n.integer("dscp", s.hosts.dscp, 0, 63));
    core::Rng rng(s.seed, "traffic[" + std::to_string(idx) + "]." + kind);
    std::vector<traffic::Flow> flows;
    try {
      if (kind == "long") {
        traffic::LongFlowParams p;
        p.size_bytes = n.size("size", p.size_bytes, 1);
        p.start_ps = n.time("start", 0);
        p.stagger_ps = n.time("stagger", 0);
        for (const CfgNode& pr : n.seq("pairs")) {
          traffic::LongFlowParams::Pair q;
          q.src = host_ref(pr, "src", pr.str("src"), H);
          q.dst = host_ref(pr, "dst", pr.str("dst"), H);
          if (pr.has("size")) q.size_bytes = pr.size("size");
          if (pr.has("start")) q.start_ps = pr.time("start");
          pr.finish();
          p.pairs.push_back(q);
        }
        p.pcp = pcp, p.dscp = dscp;
        flows = traffic::long_flows(p, hosts, rng);
      } else if (kind == "incast") {
        traffic::IncastParams p;
        p.receiver = host_ref(n, "receiver", n.str("receiver"), H);
        p.senders = host_list(n, "senders", H);
        p.fan_in = static_cast<uint32_t>(n.integer("fan_in", p.fan_in, 1, H));
        p.size_bytes = n.size("size", p.size_bytes, 1);
        p.start_ps = n.time("start", 0);
        p.interval_ps = n.time("interval", p.interval_ps, 1);
        p.count = static_cast<uint32_t>(n.integer("count", p.count, 1, 1000000));
        p.jitter_ps = n.time("jitter", 0);
        p.pcp = pcp, p.dscp = dscp;
        flows = traffic::incast(p, hosts, rng);
      } else if (kind == "background") {
        traffic::BackgroundParams p;
        p.load = n.real("load", p.load, 0.0, 1.0);
        p.start_ps = n.time("start", 0);
        p.duration_ps = n.time("duration", p.duration_ps, 1);
        p.size_bytes = n.size("size", p.size_bytes, 1);
        if (n.has("cdf")) p.cdf = cdf_of(n, s.file);
        p.pcp = pcp, p.dscp = dscp;
        flows = traffic::background(p, hosts, rng);
      } else if (kind == "cdf") {
        traffic::CdfWorkloadParams p;
        p.cdf = cdf_of(n, s.file);
        p.load = n.real("load", p.load, 0.0, 1.0);
        p.start_ps = n.time("start", 0);
        p.duration_ps = n.time("duration", p.duration_ps, 1);
        p.srcs = host_list(n, "srcs", H);
        p.dsts = host_list(n, "dsts", H);
        p.pcp = pcp, p.dscp = dscp;
        flows = traffic::cdf_workload(p, hosts, rng);
      } else if (kind == "allreduce" || kind == "alltoall") {
        std::vector<uint32_t> ranks = host_list(n, "ranks", H);
        if (ranks.empty())
          for (uint32_t i = 0; i < H; ++i) ranks.push_back(i);
        const uint64_t size = n.size("size", 64ull << 20, 1);
        const uint64_t start = n.time("start", 0);
        if (kind == "allreduce") {
          traffic::AllReduceParams p;
          p.ranks = ranks, p.size_bytes = size, p.start_ps = start, p.pcp = pcp, p.dscp = dscp;
          flows = traffic::ring_allreduce(p, hosts, rng);
        } else {
          traffic::AllToAllParams p;
          p.ranks = ranks, p.size_bytes = size, p.start_ps = start, p.pcp = pcp, p.dscp = dscp;
          p.stepped = n.boolean("stepped", true);
          flows = traffic::all_to_all(p, hosts, rng);
        }
      } else {  // flow_file
        const std::string path = resolve_relative(s.file, n.str("file"));
        try {
          flows = traffic::read_flow_file(path, n.path() + ".file", H, "flow_file", dscp);
        } catch (const core::ConfigError& err) {
          if (err.where() == path) n.fail_key("file", err.reason());
          throw;
        }
      }
    } catch (const std::invalid_argument& err) {
      n.fail(err.what());
    }
    n.finish();
    // The entry as written (flow style), so the resolved config regenerates the same flows.
    // Files it names are written as absolute paths, so the resolved config
    // reads the same files from its own folder (or anywhere).
    YAML::Node entry = YAML::Clone(n.yaml());
    if (kind == "flow_file") entry["file"] = absolute_path(s.file, n.str("file"));
    if (n.has("cdf") && !traffic::Cdf::builtin(n.str("cdf"))) entry["cdf"] = absolute_path(s.file, n.str("cdf"));
    YAML::Emitter em;
    em.SetMapFormat(YAML::Flow);
    em.SetSeqFormat(YAML::Flow);
    em << entry;
    entries.push_back(TrafficEntry{em.c_str()});
    traffic::append(all, std::move(flows));
    ++idx;
  }
  return all;
}

}  // namespace rocesim::sim
