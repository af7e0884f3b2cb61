#include "sim/capture.h"

#include <set>
#include <utility>

namespace rocesim::sim {

namespace {

// Ports of a node and each one's line rate; false if there is no such node.
bool node_ports(const Scenario& s, const std::string& node, std::vector<uint64_t>& rates) {
  rates.clear();
  if (s.topology.kind == "direct") {
    if (node != "h0" && node != "h1") return false;
    rates.push_back(s.links.link.rate_bps);
    return true;
  }
  const uint32_t n = s.topo.find(node);
  if (n == topology::kNoNode) return false;
  for (uint32_t p = 0; p < s.topo.nodes[n].ports; ++p) rates.push_back(s.topo.link_at({n, p}).rate_bps);
  return true;
}

std::string some_nodes(const Scenario& s) {
  if (s.topology.kind == "direct") return "h0, h1";
  std::string names;
  const topology::Topology& T = s.topo;
  size_t shown = 0;
  for (size_t i = 0; i < T.hosts.size() && shown < 4; ++i, ++shown) names += (shown ? ", " : "") + T.nodes[T.hosts[i]].name;
  for (size_t i = 0; i < T.switches.size() && shown < 8; ++i, ++shown)
    names += (shown ? ", " : "") + T.nodes[T.switches[i]].name;
  if (T.hosts.size() + T.switches.size() > shown) names += ", ...";
  return names;
}

}  // namespace

bool parse_snaplen(const std::string& text, uint32_t& snaplen) {
  if (text == "headers") {
    snaplen = kSnapHeaders;
    return true;
  }
  if (text.empty() || text.size() > 5) return false;
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v < 1 || v > kSnapFull) return false;
  snaplen = v;
  return true;
}

bool resolve_pcaps(const Scenario& s, const std::vector<std::string>& args, uint32_t snaplen,
                   std::vector<PcapRequest>& out, std::vector<CaptureSpec>& specs, std::string& why) {
  std::set<std::pair<std::string, uint32_t>> seen;
  std::vector<std::string> first_arg;  // per request in `out`: the argument that asked for it
  std::vector<uint64_t> rates;
  for (const std::string& arg : args) {
    const size_t colon = arg.rfind(':');
    const bool all = colon != std::string::npos && colon > 0 && arg.substr(colon + 1) == "*";
    PcapRequest r;
    std::string err;
    if (all) {
      r.arg = arg;
      r.node = arg.substr(0, colon);
    } else if (!parse_pcap_request(arg, r, err)) {
      why = "--pcap " + arg + ": " + err + " or NODE:* for every port of a node";
      return false;
    }
    if (!node_ports(s, r.node, rates)) {
      why = "--pcap " + arg + ": no node '" + r.node + "' in this topology (nodes: " + some_nodes(s) + ")";
      return false;
    }
    if (!all && r.port >= rates.size()) {
      why = "--pcap " + arg + ": node '" + r.node + "' has " +
            (rates.size() == 1 ? std::string("1 port (port 0)")
                               : std::to_string(rates.size()) + " ports (0.." + std::to_string(rates.size() - 1) + ")");
      return false;
    }
    const uint32_t lo = all ? 0 : r.port, hi = all ? static_cast<uint32_t>(rates.size()) : r.port + 1;
    for (uint32_t p = lo; p < hi; ++p) {
      if (!seen.emplace(r.node, p).second) {
        size_t i = 0;
        while (out[i].node != r.node || out[i].port != p) ++i;
        why = "--pcap " + arg + ": port " + r.node + ":" + std::to_string(p) + " is already captured (--pcap " +
              first_arg[i] + ")";
        return false;
      }
      PcapRequest q = r;
      q.port = p;
      q.snaplen = snaplen;
      out.push_back(q);
      first_arg.push_back(arg);
      specs.push_back(CaptureSpec{rates[p]});
    }
  }
  return true;
}

}  // namespace rocesim::sim
