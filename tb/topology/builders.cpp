#include "topology/builders.h"

#include <stdexcept>
#include <string>

namespace rocesim::topology {

namespace {

[[noreturn]] void bad_param(const char* builder, const char* key, uint64_t value, const std::string& bound) {
  throw std::invalid_argument(std::string(builder) + "." + key + " = " + std::to_string(value) + ": " + bound);
}

void require_count(const char* builder, const char* key, uint64_t value) {
  if (value < 1) bad_param(builder, key, value, "must be >= 1");
}

void require_rate(const char* builder, const char* key, uint64_t bps) {
  if (bps == 0) bad_param(builder, key, bps, "must be > 0 bps");
}

// Appends nodes and links; node/link order is part of the documented layout.
struct Build {
  Topology t;

  void add_hosts(uint32_t n, uint32_t ports = 1) {
    for (uint32_t i = 0; i < n; ++i)
      t.nodes.push_back(Node{"h" + std::to_string(i), Node::host, i, "host", ports, host_ip_of(i)});
  }
  // `count` switches of one role; returns the node index of the first.
  uint32_t add_switches(const std::string& role, uint32_t count, uint32_t ports) {
    const uint32_t first = static_cast<uint32_t>(t.nodes.size());
    for (uint32_t i = 0; i < count; ++i) t.nodes.push_back(Node{role + std::to_string(i), Node::sw, i, role, ports, 0});
    return first;
  }
  void link(uint32_t na, uint32_t pa, uint32_t nb, uint32_t pb, uint64_t rate, uint64_t mm) {
    t.links.push_back(LinkSpec{PortRef{na, pa}, PortRef{nb, pb}, rate, mm});
  }
};

}  // namespace

Topology single_switch(const SingleParams& p) {
  const char* b = "single_switch";
  require_count(b, "hosts", p.hosts);
  if (p.hosts > kMaxHosts) bad_param(b, "hosts", p.hosts, "must be <= " + std::to_string(kMaxHosts));
  require_rate(b, "host_rate", p.host_rate);

  Build bl;
  bl.t.kind = b;
  bl.add_hosts(p.hosts);
  const uint32_t sw = bl.add_switches("sw", 1, p.hosts);
  for (uint32_t i = 0; i < p.hosts; ++i) bl.link(i, 0, sw, i, p.host_rate, p.cable_mm);
  finalize(bl.t, p.routes);
  return std::move(bl.t);
}

Topology leaf_spine(const LeafSpineParams& p) {
  const char* b = "leaf_spine";
  require_count(b, "leaves", p.leaves);
  require_count(b, "spines", p.spines);
  require_count(b, "hosts_per_leaf", p.hosts_per_leaf);
  require_count(b, "links_per_leaf_spine", p.links_per_leaf_spine);
  require_rate(b, "host_rate", p.host_rate);
  require_rate(b, "fabric_rate", p.fabric_rate);
  const uint64_t hosts = static_cast<uint64_t>(p.leaves) * p.hosts_per_leaf;
  if (hosts > kMaxHosts)
    throw std::invalid_argument(std::string(b) + ": leaves * hosts_per_leaf = " + std::to_string(hosts) +
                                " hosts: must be <= " + std::to_string(kMaxHosts));
  if (p.leaves > kMaxLeaves) bad_param(b, "leaves", p.leaves, "must be <= " + std::to_string(kMaxLeaves));
  const uint64_t per_leaf = static_cast<uint64_t>(p.spines) * p.links_per_leaf_spine;  // < 2^64
  // Checked before the product so it cannot overflow (leaves <= kMaxLeaves).
  if (per_leaf > kMaxFabricLinks || per_leaf * p.leaves > kMaxFabricLinks)
    throw std::invalid_argument(std::string(b) + ": leaves * spines * links_per_leaf_spine = " +
                                (per_leaf > kMaxFabricLinks ? std::string("more than ") + std::to_string(kMaxFabricLinks)
                                                            : std::to_string(per_leaf * p.leaves)) +
                                " fabric links: must be <= " + std::to_string(kMaxFabricLinks));
  if (p.mlag && p.leaves % 2 != 0) bad_param(b, "leaves", p.leaves, "must be even with mlag (pairs of leaves)");
  // With M-LAG a leaf carries its pair's 2 * hosts_per_leaf hosts and a peer link.
  const uint64_t leaf_ports = (p.mlag ? 2ull * p.hosts_per_leaf + 1 : p.hosts_per_leaf) + per_leaf;
  if (leaf_ports > kMaxPortsPerNode)
    throw std::invalid_argument(std::string(b) + (p.mlag ? ": 2 * hosts_per_leaf + spines * links_per_leaf_spine + 1 = "
                                                         : ": hosts_per_leaf + spines * links_per_leaf_spine = ") +
                                std::to_string(leaf_ports) + " leaf ports: must be <= " +
                                std::to_string(kMaxPortsPerNode));
  const uint64_t spine_ports = static_cast<uint64_t>(p.leaves) * p.links_per_leaf_spine;
  if (spine_ports > kMaxPortsPerNode)
    throw std::invalid_argument(std::string(b) + ": leaves * links_per_leaf_spine = " + std::to_string(spine_ports) +
                                " spine ports: must be <= " + std::to_string(kMaxPortsPerNode));

  const uint32_t L = p.leaves, S = p.spines, H = p.hosts_per_leaf, K = p.links_per_leaf_spine;
  Build bl;
  bl.t.kind = b;
  bl.add_hosts(L * H, p.mlag ? 2 : 1);
  const uint32_t leaf0 = bl.add_switches("leaf", L, static_cast<uint32_t>(leaf_ports));
  const uint32_t spine0 = bl.add_switches("spine", S, L * K);
  // First spine port of a leaf: after its host ports.
  const uint32_t up0 = p.mlag ? 2 * H : H;
  if (p.mlag) {
    // Host i of pair k (hosts 2kH .. 2kH+2H-1) on port i - 2kH of both leaves.
    for (uint32_t port = 0; port < 2; ++port)
      for (uint32_t i = 0; i < L * H; ++i) {
        const uint32_t pair = i / (2 * H);
        bl.link(i, port, leaf0 + 2 * pair + port, i % (2 * H), p.host_rate, p.host_cable_mm);
      }
  } else {
    for (uint32_t l = 0; l < L; ++l)
      for (uint32_t j = 0; j < H; ++j) bl.link(l * H + j, 0, leaf0 + l, j, p.host_rate, p.host_cable_mm);
  }
  for (uint32_t l = 0; l < L; ++l)
    for (uint32_t s = 0; s < S; ++s)
      for (uint32_t k = 0; k < K; ++k)
        bl.link(leaf0 + l, up0 + s * K + k, spine0 + s, l * K + k, p.fabric_rate, p.fabric_cable_mm);
  if (p.mlag) {
    const uint32_t peer = mlag_peer_port(p);
    for (uint32_t k = 0; k < L / 2; ++k)
      bl.link(leaf0 + 2 * k, peer, leaf0 + 2 * k + 1, peer, p.peer_rate ? p.peer_rate : p.fabric_rate,
              p.peer_cable_mm ? p.peer_cable_mm : p.fabric_cable_mm);
  }
  finalize(bl.t, p.routes);
  if (p.mlag) {
    bl.t.mlag_peer_port.assign(bl.t.nodes.size(), kNoNode);
    for (uint32_t l = 0; l < L; ++l) bl.t.mlag_peer_port[leaf0 + l] = mlag_peer_port(p);
  }
  return std::move(bl.t);
}

Topology fat_tree(const FatTreeParams& p) {
  const char* b = "fat_tree";
  if (p.k < 2 || p.k % 2 != 0) bad_param(b, "k", p.k, "must be even and >= 2");
  const uint64_t k = p.k;
  // k > 2000 would overflow k^3 in the message's arithmetic; it is far too big anyway.
  if (k > 2000 || k * k * k / 4 > kMaxHosts)
    bad_param(b, "k", p.k,
              (k > 2000 ? std::string("k^3/4 hosts") : "k^3/4 = " + std::to_string(k * k * k / 4) + " hosts") +
                  ": must be <= " + std::to_string(kMaxHosts) + " (k <= 62)");
  require_rate(b, "rate", p.rate);

  const uint32_t h = p.k / 2;
  const uint32_t pods = p.k;
  Build bl;
  bl.t.kind = b;
  bl.add_hosts(pods * h * h);
  const uint32_t tor0 = bl.add_switches("tor", pods * h, p.k);
  const uint32_t agg0 = bl.add_switches("agg", pods * h, p.k);
  const uint32_t core0 = bl.add_switches("core", h * h, p.k);
  for (uint32_t t = 0; t < pods * h; ++t)
    for (uint32_t j = 0; j < h; ++j) bl.link(t * h + j, 0, tor0 + t, j, p.rate, p.cable_mm);
  for (uint32_t t = 0; t < pods * h; ++t) {
    const uint32_t pod = t / h;
    for (uint32_t a = 0; a < h; ++a) bl.link(tor0 + t, h + a, agg0 + pod * h + a, t % h, p.rate, p.cable_mm);
  }
  for (uint32_t g = 0; g < pods * h; ++g) {
    const uint32_t pod = g / h;
    for (uint32_t c = 0; c < h; ++c) bl.link(agg0 + g, h + c, core0 + (g % h) * h + c, pod, p.rate, p.cable_mm);
  }
  finalize(bl.t, p.routes);
  return std::move(bl.t);
}

Topology ring(const RingParams& p) {
  const char* b = "ring";
  if (p.switches < 3) bad_param(b, "switches", p.switches, "must be >= 3");
  require_count(b, "hosts_per_switch", p.hosts_per_switch);
  require_rate(b, "rate", p.rate);
  const uint64_t hosts = static_cast<uint64_t>(p.switches) * p.hosts_per_switch;
  if (hosts > kMaxHosts)
    throw std::invalid_argument(std::string(b) + ": switches * hosts_per_switch = " + std::to_string(hosts) +
                                " hosts: must be <= " + std::to_string(kMaxHosts));
  const uint32_t N = p.switches, H = p.hosts_per_switch;
  Build bl;
  bl.t.kind = b;
  bl.add_hosts(N * H);
  const uint32_t sw0 = bl.add_switches("ring", N, H + 2);
  for (uint32_t i = 0; i < N; ++i)
    for (uint32_t j = 0; j < H; ++j) bl.link(i * H + j, 0, sw0 + i, j, p.rate, p.cable_mm);
  for (uint32_t i = 0; i < N; ++i) bl.link(sw0 + i, H, sw0 + (i + 1) % N, H + 1, p.rate, p.cable_mm);
  finalize(bl.t, RouteStyle::per_host);
  if (p.clockwise) {
    // Replace the shortest-path routes: local hosts on their port, everything else clockwise.
    for (uint32_t i = 0; i < N; ++i) {
      const uint32_t n = sw0 + i;
      std::vector<Group>& groups = bl.t.groups[n];
      std::vector<Route>& routes = bl.t.routes[n];
      groups.clear();
      routes.clear();
      for (uint32_t j = 0; j < H; ++j) groups.push_back(Group{{j}});
      groups.push_back(Group{{H}});
      for (uint32_t h = 0; h < N * H; ++h) {
        const uint32_t g = h / H == i ? h % H : H;
        routes.push_back(Route{host_ip_of(h), 32, g});
      }
    }
    bl.t.route_style = RouteStyle::per_host;
  }
  return std::move(bl.t);
}

}  // namespace rocesim::topology
