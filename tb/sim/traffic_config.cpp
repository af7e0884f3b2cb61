#include "sim/traffic_config.h"

#include <stdexcept>

#include "core/units.h"
#include "sim/config_util.h"
#include "sim/scenario.h"

namespace rocesim::sim {

using core::CfgNode;

namespace {

// ---------------------------------------------------------------------------
// What a read needs besides the generator's parameters: the topology's host
// count (host names and lists, `fan_in`) and the scenario file (relative paths).
struct Ctx {
  uint32_t hosts = 0;
  std::string file;
};

// One wrapper per kind: the generator's parameters (tb/traffic/traffic.h,
// whose member defaults are the keys' defaults) plus the context.
struct LongGen {
  traffic::LongFlowParams p;
  Ctx ctx;
};
struct LongPair {
  traffic::LongFlowParams::Pair q;
  Ctx ctx;
};
struct IncastGen {
  traffic::IncastParams p;
  Ctx ctx;
};
struct BackgroundGen {
  traffic::BackgroundParams p;
  Ctx ctx;
  std::string cdf_name;  // a built-in name or an absolute path; "" = fixed `size`
};
struct CdfGen {
  traffic::CdfWorkloadParams p;  // p.cdf: websearch by default
  Ctx ctx;
  std::string cdf_name = "websearch";
};
struct AllReduceGen {
  traffic::AllReduceParams p;
  Ctx ctx;
};
struct AllToAllGen {
  traffic::AllToAllParams p;
  Ctx ctx;
};
// flow_file: the HPCC file gives each flow's priority (pg); `pcp` is read and not used.
struct FlowFileParams {
  std::string file;  // as written
  uint8_t pcp = 3, dscp = 26;
};
struct FlowFileGen {
  FlowFileParams p;
  Ctx ctx;
};

// ---------------------------------------------------------------------------
// Host lists: `all`, a list of names, or a range "h3-h9".

std::vector<uint32_t> read_host_list(const CfgNode& n, const std::string& key, uint32_t hosts) {
  std::vector<uint32_t> out;
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

std::string host_name(uint32_t h) { return "h" + std::to_string(h); }

// `all` for every host in order (and for an empty list where empty means
// every host), "hA-hB" for an ascending contiguous run of two or more, else a
// list; an empty list that means something else is written `[]`.
std::string host_list_text(const std::vector<uint32_t>& v, uint32_t hosts, bool empty_is_all) {
  if (v.empty()) return empty_is_all ? "all" : "[]";
  bool contiguous = true;
  for (size_t i = 1; i < v.size() && contiguous; ++i) contiguous = v[i] == v[0] + i;
  if (contiguous && v[0] == 0 && v.size() == hosts) return "all";
  if (contiguous && v.size() >= 2) return host_name(v.front()) + "-" + host_name(v.back());
  std::string o;
  for (uint32_t h : v) o += (o.empty() ? "" : ", ") + host_name(h);
  return "[" + o + "]";
}

template <class S, class A>
Key<S> host_list(std::string name, A acc, bool empty_is_all, std::string doc) {
  return {name, "host list: `all`, `hA-hB` or `[hA, hB, ...]`", std::move(doc),
          [acc](const CfgNode& n, const std::string& k, S& s) {
            if (n.has(k)) acc(s) = read_host_list(n, k, s.ctx.hosts);
            else (void)n.seq(k);  // absent: the default (and a name for suggestions)
          },
          [acc, empty_is_all](const S& s) { return host_list_text(acc(s), s.ctx.hosts, empty_is_all); }};
}

// A single host, required.
template <class S, class A>
Key<S> host(std::string name, A acc, std::string doc) {
  return {name, "host name `h<i>`", std::move(doc),
          [acc](const CfgNode& n, const std::string& k, S& s) { acc(s) = host_ref(n, k, n.str(k), s.ctx.hosts); },
          [acc](const S& s) { return host_name(acc(s)); }, "*required*"};
}

// ---------------------------------------------------------------------------
// The keys every kind has: `kind` (read by read_traffic to pick the table),
// `pcp` and `dscp` (defaults: hosts.pcp, hosts.dscp, set before the read).

template <class S>
Key<S> kind_key(const std::string& kind, std::string doc) {
  return {"kind", "`" + kind + "`", std::move(doc), [](const CfgNode&, const std::string&, S&) {},
          [kind](const S&) { return kind; }, "*required*"};
}

template <class S>
KeyTable<S> common_keys(const std::string& kind, std::string doc) {
  return {kind_key<S>(kind, std::move(doc)),
          keys::with_default(keys::integer<S>("pcp", ROCESIM_MEMBER(p.pcp), 0, 7, "priority code point of its flows"),
                             "`hosts.pcp`"),
          keys::with_default(keys::integer<S>("dscp", ROCESIM_MEMBER(p.dscp), 0, 63, "IPv4 DSCP of its flows"),
                             "`hosts.dscp`")};
}

template <class S>
KeyTable<S> concat(KeyTable<S> a, const KeyTable<S>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `cdf`: a built-in name, else a file of "bytes percent" lines relative to the
// scenario. name_out is what the resolved config writes: the built-in name or
// the file's absolute path (which also names the CDF, hence the flows' tag,
// the same from the scenario and from its resolved config).
traffic::Cdf read_cdf(const CfgNode& n, const std::string& key, const std::string& scenario_file,
                      std::string& name_out) {
  const std::string name = n.str(key);
  if (auto b = traffic::Cdf::builtin(name)) {
    name_out = name;
    return *b;
  }
  const std::string path = absolute_path(scenario_file, name);
  const std::string key_path = n.path() + "." + key;
  try {
    traffic::Cdf c = traffic::read_cdf_file(path, key_path);
    name_out = path;
    return c;
  } catch (const core::ConfigError& e) {
    if (e.where() == path && e.key_path() == key_path)  // the file cannot be read
      n.fail_key(key, "'" + name + "' is not a built-in CDF (" + traffic::Cdf::builtin_names() +
                          ") and not a readable file: " + e.reason());
    throw;
  }
}

const std::string kCdfType = "`websearch`, `fb_hadoop` or a file";
const std::string kCdfDoc =
    "flow sizes: a built-in CDF (DCTCP's web search, Facebook's Hadoop) or a file of `bytes percent` lines "
    "(relative to the scenario; written as an absolute path)";

// ---------------------------------------------------------------------------
// The tables.

const KeyTable<LongPair>& pair_keys() {
  using S = LongPair;
  static const KeyTable<S> t{
      host<S>("src", ROCESIM_MEMBER(q.src), "sender"),
      host<S>("dst", ROCESIM_MEMBER(q.dst), "receiver, not `src`"),
      {"size", "size, at least 1B", "this pair's size",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (n.has(k)) s.q.size_bytes = n.size(k, 0, 1);
       },
       [](const S& s) { return s.q.size_bytes ? core::format_size(*s.q.size_bytes) : std::string(); },
       "the entry's `size`"},
      {"start", "time", "this pair's start",
       [](const CfgNode& n, const std::string& k, S& s) {
         if (n.has(k)) s.q.start_ps = n.time(k, 0);
       },
       [](const S& s) { return s.q.start_ps ? core::format_time(*s.q.start_ps) : std::string(); },
       "`start` + i x `stagger`"},
  };
  return t;
}

const KeyTable<LongGen>& long_keys() {
  using S = LongGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("long", "long flows between given pairs, one flow per pair"),
      KeyTable<S>{
          {"pairs", "list of `{src, dst, size, start}`", "the pairs (keys `pairs[].*` below)",
           [](const CfgNode& n, const std::string& k, S& s) {
             if (!n.has(k)) {
               (void)n.seq(k);
               return;
             }
             s.p.pairs.clear();
             for (const CfgNode& pr : n.seq(k)) {
               LongPair lp{traffic::LongFlowParams::Pair{}, s.ctx};
               read_keys(pair_keys(), pr, lp);
               pr.finish();
               s.p.pairs.push_back(lp.q);
             }
           },
           [](const S& s) {
             std::string o;
             for (const traffic::LongFlowParams::Pair& q : s.p.pairs)
               o += (o.empty() ? "" : ", ") + emit_flow(pair_keys(), LongPair{q, s.ctx});
             return "[" + o + "]";
           }},
          keys::size<S>("size", ROCESIM_MEMBER(p.size_bytes), 1, UINT64_MAX, "size of each flow"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "start of the first pair's flow"),
          keys::time<S>("stagger", ROCESIM_MEMBER(p.stagger_ps), 0, UINT64_MAX,
                        "pair i starts at `start` + i x `stagger` (unless it gives its own `start`)"),
      });
  return t;
}

const KeyTable<IncastGen>& incast_keys() {
  using S = IncastGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("incast", "`count` synchronized rounds of every sender to the receiver"),
      KeyTable<S>{
          host<S>("receiver", ROCESIM_MEMBER(p.receiver), "the receiver"),
          host_list<S>("senders", ROCESIM_MEMBER(p.senders), false,
                       "the senders (distinct, not the receiver); `[]`: `fan_in` random senders"),
          {"fan_in", "integer, 1 .. the number of hosts",
           "without `senders`: this many distinct senders drawn uniformly from the other hosts (fewer than the "
           "hosts); not written with `senders`",
           [](const CfgNode& n, const std::string& k, S& s) {
             s.p.fan_in = static_cast<uint32_t>(n.integer(k, s.p.fan_in, 1, s.ctx.hosts));
           },
           [](const S& s) { return s.p.senders.empty() ? std::to_string(s.p.fan_in) : std::string(); }},
          keys::size<S>("size", ROCESIM_MEMBER(p.size_bytes), 1, UINT64_MAX, "per sender per round"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "start of the first round"),
          keys::time<S>("interval", ROCESIM_MEMBER(p.interval_ps), 1, UINT64_MAX, "time between rounds"),
          keys::integer<S>("count", ROCESIM_MEMBER(p.count), 1, 1000000, "rounds"),
          keys::time<S>("jitter", ROCESIM_MEMBER(p.jitter_ps), 0, UINT64_MAX,
                        "each flow of a round starts uniformly in [round start, + jitter)"),
      });
  return t;
}

const KeyTable<BackgroundGen>& background_keys() {
  using S = BackgroundGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("background", "Poisson arrivals at `load` of the aggregate host capacity, random pairs"),
      KeyTable<S>{
          keys::real<S>("load", ROCESIM_MEMBER(p.load), 0.0, 1.0, "fraction of the aggregate host link capacity"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "start of the arrivals"),
          keys::time<S>("duration", ROCESIM_MEMBER(p.duration_ps), 1, UINT64_MAX,
                        "arrivals in [start, start + duration)"),
          {"size", "size, at least 1B", "fixed flow size (without `cdf`; not written with it)",
           [](const CfgNode& n, const std::string& k, S& s) { s.p.size_bytes = n.size(k, s.p.size_bytes, 1); },
           [](const S& s) { return s.cdf_name.empty() ? core::format_size(s.p.size_bytes) : std::string(); }},
          {"cdf", kCdfType, "instead of `size`: " + kCdfDoc,
           [](const CfgNode& n, const std::string& k, S& s) {
             if (n.has(k)) s.p.cdf = read_cdf(n, k, s.ctx.file, s.cdf_name);
           },
           [](const S& s) { return s.cdf_name.empty() ? std::string() : yaml_quote(s.cdf_name); }, "none"},
      });
  return t;
}

const KeyTable<CdfGen>& cdf_keys() {
  using S = CdfGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("cdf",
                     "Poisson arrivals: lambda = load x capacity of the sources / (8 x mean size); sizes by inverse "
                     "transform with linear interpolation (HPCC); flows tagged with the CDF's name"),
      KeyTable<S>{
          {"cdf", kCdfType, kCdfDoc,
           [](const CfgNode& n, const std::string& k, S& s) {
             if (n.has(k)) s.p.cdf = read_cdf(n, k, s.ctx.file, s.cdf_name);
           },
           [](const S& s) { return yaml_quote(s.cdf_name); }},
          keys::real<S>("load", ROCESIM_MEMBER(p.load), 0.0, 1.0, "fraction of the source hosts' link capacity"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "start of the arrivals"),
          keys::time<S>("duration", ROCESIM_MEMBER(p.duration_ps), 1, UINT64_MAX,
                        "arrivals in [start, start + duration)"),
          host_list<S>("srcs", ROCESIM_MEMBER(p.srcs), true,
                       "source hosts (distinct), each picked in proportion to its link rate"),
          host_list<S>("dsts", ROCESIM_MEMBER(p.dsts), true,
                       "destination hosts (distinct), uniform among those other than the source"),
      });
  return t;
}

const KeyTable<AllReduceGen>& allreduce_keys() {
  using S = AllReduceGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("allreduce",
                     "ring all-reduce: 2(N-1) steps of size/N; a rank's step k+1 starts when its step-k data arrived"),
      KeyTable<S>{
          host_list<S>("ranks", ROCESIM_MEMBER(p.ranks), true, "the ring's ranks in order (distinct; `[]`: all)"),
          keys::size<S>("size", ROCESIM_MEMBER(p.size_bytes), 1, UINT64_MAX,
                        "per-rank buffer, at least one byte per rank"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "earliest start of every flow"),
      });
  return t;
}

const KeyTable<AllToAllGen>& alltoall_keys() {
  using S = AllToAllGen;
  static const KeyTable<S> t = concat(
      common_keys<S>("alltoall",
                     "all-to-all in N-1 shifted steps: in step k rank i sends its chunk (size/N) for rank i+k mod N"),
      KeyTable<S>{
          host_list<S>("ranks", ROCESIM_MEMBER(p.ranks), true, "the ranks in order (distinct; `[]`: all)"),
          keys::size<S>("size", ROCESIM_MEMBER(p.size_bytes), 1, UINT64_MAX,
                        "per-rank buffer, at least one byte per rank"),
          keys::time<S>("start", ROCESIM_MEMBER(p.start_ps), 0, UINT64_MAX, "earliest start of every flow"),
          keys::boolean<S>("stepped", ROCESIM_MEMBER(p.stepped),
                           "a sender's step waits for its previous step's flow to complete; `false`: all at once"),
      });
  return t;
}

const KeyTable<FlowFileGen>& flow_file_keys() {
  using S = FlowFileGen;
  static const KeyTable<S> t{
      kind_key<S>("flow_file", "the flows of an HPCC flow file, tagged `flow_file`"),
      {"pcp", "integer, 0 .. 7", "accepted and not used: the file gives each flow's priority (`pg`); not written",
       [](const CfgNode& n, const std::string& k, S& s) {
         s.p.pcp = static_cast<uint8_t>(n.integer(k, s.p.pcp, 0, 7));
       },
       [](const S&) { return std::string(); }, "not used"},
      keys::with_default(keys::integer<S>("dscp", ROCESIM_MEMBER(p.dscp), 0, 63, "IPv4 DSCP of its flows"),
                         "`hosts.dscp`"),
      {"file", "path", "HPCC flow file: a count line, then `src dst pg dport size start_s` per flow (relative to the "
                       "scenario; written as an absolute path); `src` and `dst` are host indices, or with "
                       "`topology.kind: hpcc` the topology file's node ids",
       [](const CfgNode& n, const std::string& k, S& s) { s.p.file = n.str(k); },
       [](const S& s) { return yaml_quote(absolute_path(s.ctx.file, s.p.file)); }, "*required*"},
  };
  return t;
}

// Reads one entry with table t into g (whose parameters hold the defaults),
// refuses keys the table does not know, generates its flows and writes the entry.
template <class G, class Gen>
std::vector<traffic::Flow> generate(const CfgNode& n, const KeyTable<G>& t, G g, Gen gen, TrafficEntry& entry) {
  read_keys(t, n, g);
  n.finish();
  std::vector<traffic::Flow> flows;
  try {
    flows = gen(g);
  } catch (const std::invalid_argument& err) {
    n.fail(err.what());
  }
  entry.text = emit_flow(t, g);
  return flows;
}

template <class G>
G with_ctx(const Ctx& ctx, const Scenario& s) {
  G g;
  g.ctx = ctx;
  g.p.pcp = static_cast<uint8_t>(s.hosts.pcp);
  g.p.dscp = static_cast<uint8_t>(s.hosts.dscp);
  return g;
}

template <class G>
std::string reference(const KeyTable<G>& t) {
  return reference_header() + reference_rows(t, G{});
}

}  // namespace

const std::vector<std::string>& traffic_kinds() {
  static const std::vector<std::string> k{"long", "incast", "background", "cdf", "allreduce", "alltoall", "flow_file"};
  return k;
}

std::string traffic_key_reference(const std::string& kind) {
  if (kind == "long") return reference(long_keys()) + reference_rows(pair_keys(), LongPair{}, "pairs[].");
  if (kind == "incast") return reference(incast_keys());
  if (kind == "background") return reference(background_keys());
  if (kind == "cdf") return reference(cdf_keys());
  if (kind == "allreduce") return reference(allreduce_keys());
  if (kind == "alltoall") return reference(alltoall_keys());
  if (kind == "flow_file") return reference(flow_file_keys());
  return "";
}

std::vector<traffic::Flow> read_traffic(const CfgNode& root, const Scenario& s, std::vector<TrafficEntry>& entries) {
  std::vector<traffic::Flow> all;
  const uint32_t H = s.num_hosts();
  std::vector<uint64_t> rates;
  for (uint32_t h = 0; h < H; ++h) rates.push_back(s.host_rate(h));
  const traffic::Hosts hosts(rates);
  const Ctx ctx{H, s.file};
  // An HPCC topology: flow files name hosts by the topology file's node ids.
  std::vector<uint32_t> host_of_id;
  for (uint32_t node = 0; node < s.topo.file_ids.size(); ++node) {
    const uint32_t id = s.topo.file_ids[node];
    if (host_of_id.size() <= id) host_of_id.resize(id + 1, traffic::kNotHost);
    if (s.topo.nodes[node].kind == topology::Node::host) host_of_id[id] = s.topo.nodes[node].index;
  }
  const std::vector<uint32_t>* ids = s.topo.file_ids.empty() ? nullptr : &host_of_id;
  size_t idx = 0;
  for (const CfgNode& n : root.seq("traffic")) {
    const std::string kind = n.choice("kind", "", traffic_kinds());
    if (kind.empty()) n.fail_key("kind", "missing required key");
    core::Rng rng(s.seed, "traffic[" + std::to_string(idx) + "]." + kind);
    TrafficEntry entry;
    std::vector<traffic::Flow> flows;
    if (kind == "long") {
      flows = generate(n, long_keys(), with_ctx<LongGen>(ctx, s),
                       [&](const LongGen& g) { return traffic::long_flows(g.p, hosts, rng); }, entry);
    } else if (kind == "incast") {
      flows = generate(n, incast_keys(), with_ctx<IncastGen>(ctx, s),
                       [&](const IncastGen& g) { return traffic::incast(g.p, hosts, rng); }, entry);
    } else if (kind == "background") {
      flows = generate(n, background_keys(), with_ctx<BackgroundGen>(ctx, s),
                       [&](const BackgroundGen& g) { return traffic::background(g.p, hosts, rng); }, entry);
    } else if (kind == "cdf") {
      flows = generate(n, cdf_keys(), with_ctx<CdfGen>(ctx, s),
                       [&](const CdfGen& g) { return traffic::cdf_workload(g.p, hosts, rng); }, entry);
    } else if (kind == "allreduce") {
      flows = generate(n, allreduce_keys(), with_ctx<AllReduceGen>(ctx, s),
                       [&](const AllReduceGen& g) { return traffic::ring_allreduce(g.p, hosts, rng); }, entry);
    } else if (kind == "alltoall") {
      flows = generate(n, alltoall_keys(), with_ctx<AllToAllGen>(ctx, s),
                       [&](const AllToAllGen& g) { return traffic::all_to_all(g.p, hosts, rng); }, entry);
    } else {  // flow_file
      flows = generate(n, flow_file_keys(), with_ctx<FlowFileGen>(ctx, s),
                       [&](const FlowFileGen& g) {
                         const std::string path = resolve_relative(s.file, g.p.file);
                         try {
                           return traffic::read_flow_file(path, n.path() + ".file", H, "flow_file", g.p.dscp, ids);
                         } catch (const core::ConfigError& err) {
                           if (err.where() == path) n.fail_key("file", err.reason());
                           throw;
                         }
                       },
                       entry);
    }
    entries.push_back(std::move(entry));
    traffic::append(all, std::move(flows));
    ++idx;
  }
  return all;
}

}  // namespace rocesim::sim
