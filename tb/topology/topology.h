// Fabric topology: a pure description (nodes, links, routes) that the
// integrator instantiates SystemC modules from. Plain C++17: no SystemC, no YAML.
//
// Conventions shared by every builder (see builders.h for the shapes):
//  - Hosts come first: nodes[i] is host h<i> for i < hosts.size(), so a host's
//    node index equals its h-index. Switches follow, in the order listed in
//    `switches`.
//  - A host has one port (port 0), except a dual-homed (M-LAG) host, which has
//    two: port 0 and port 1 to two different switches (the pair's members).
//    Every port of every node is the end of exactly one link; finalize()
//    rejects anything else.
//  - Links to hosts come first too: links[i] joins h<i> port 0 (end a) to its
//    switch (end b). The builders then put the port-1 links of dual-homed
//    hosts (h-order), then fabric links with the lower tier on end a, then
//    M-LAG peer links (the pair's first member on end a).
//
// Addressing (host_ip_of / Topology::host_ip):
//    h<i> has IPv4 10.0.0.0 + i + 1 (h0 = 10.0.0.1, h255 = 10.0.1.0,
//    h64999 = 10.0.253.232), as tb/sim already uses; unique for up to
//    2^24 - 2 hosts, far above kMaxHosts.
// MAC addresses (mac_of), locally administered unicast, unique per (node, port):
//    host h<i>:               02:00:00:ii:ii:ii  (0x020000000000 | i), as tb/sim
//    switch node n, port p:   0x028000000000 | n << 16 | p
//    (bit 39 tells switches from hosts; n < 2^23 and p < 2^16 are enforced).
//
// Routes: for every destination host, each switch's next hops are all its
// ports whose peer is strictly one hop closer to that host (hosts do not
// forward): the shortest-path ECMP set, which in a Clos is up-down routing.
// Parallel links are separate ports in a group. Groups are deduplicated per
// switch and their ports are sorted ascending.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rocesim::topology {

inline constexpr uint32_t kNoNode = 0xffffffffu;
inline constexpr uint32_t kNoRoute = 0xffffffffu;
inline constexpr uint32_t kMaxHosts = 65000;
inline constexpr uint32_t kMaxPortsPerNode = 65536;      // fits the MAC's port field
inline constexpr uint32_t kMaxNodes = 1u << 23;          // fits the MAC's node field

struct Node {
  std::string name;                 // "h3", "leaf0", "spine2", "tor5", "agg1", "core0", "sw0"
  enum Kind { host, sw } kind = host;
  uint32_t index = 0;               // h<i>: i; switches numbered per role (leaf3: 3)
  std::string role;                 // "host", "sw", "leaf", "spine", "tor", "agg", "core"
  uint32_t ports = 0;               // a host has 1 (2 if dual-homed)
  uint32_t ip = 0;                  // hosts only; 0 for switches
};

struct PortRef {
  uint32_t node = 0;
  uint32_t port = 0;
};
inline bool operator==(PortRef x, PortRef y) { return x.node == y.node && x.port == y.port; }
inline bool operator!=(PortRef x, PortRef y) { return !(x == y); }

inline constexpr uint64_t kCableDelay = UINT64_MAX;

struct LinkSpec {
  PortRef a, b;
  uint64_t rate_bps = 0;            // both directions
  uint64_t length_mm = 0;
  // Propagation delay of this cable; kCableDelay: length_mm x links.delay_per_m
  // (the builders). A topology file that gives delays (kind hpcc) sets it.
  uint64_t delay_ps = kCableDelay;
  // Probability a frame is lost on this cable, each direction; < 0: links.loss.
  double loss = -1.0;
};
// The propagation delay of l with delay_per_m_ps on cables given by length.
constexpr uint64_t cable_delay_ps(const LinkSpec& l, uint64_t delay_per_m_ps) {
  return l.delay_ps != kCableDelay ? l.delay_ps : l.length_mm * delay_per_m_ps / 1000;
}

struct Route {
  uint32_t prefix = 0;              // host bits below prefix_len must be zero
  uint8_t prefix_len = 32;          // 0..32
  uint32_t group = 0;               // index into the switch's groups
};

struct Group {
  std::vector<uint32_t> ports;      // sorted ascending, never empty
};

enum class RouteStyle {
  // One /32 per reachable destination host: a lookup is one hash probe
  // (~2 ns), but the tables hold switches x hosts routes in all.
  per_host,
  // The same forwarding as per_host, compressed exactly: each maximal run of
  // consecutive host addresses with the same group becomes the fewest aligned
  // prefixes covering exactly that run (non-overlapping, so an address that
  // is not a host still finds no route). Tables shrink by orders of magnitude
  // (k=62 fat-tree: 1.1M routes instead of 286M) but a lookup probes every
  // prefix length present (7 in a default leaf, 12 in a k=62 agg: 30-60 ns).
  aggregated,
  // per_host unless switches x hosts exceeds kAutoPerHostRoutes, else aggregated.
  automatic,
};
inline constexpr uint64_t kAutoPerHostRoutes = 4u << 20;
// per_host beyond this many routes (~1.5 GB with the switches' hash tables) is refused.
inline constexpr uint64_t kMaxPerHostRoutes = 64u << 20;

// h<i>'s IPv4 address (10.0.0.0 + i + 1), as a host-order integer.
constexpr uint32_t host_ip_of(uint32_t i) { return 0x0A000000u + i + 1; }
// Dotted-quad text of a host-order IPv4 address.
std::string ip_to_string(uint32_t ip);

struct Topology {
  std::string kind;                            // "single_switch", "leaf_spine", "fat_tree", or custom
  std::vector<Node> nodes;
  std::vector<LinkSpec> links;
  std::vector<std::vector<Route>> routes;      // indexed by node; empty for hosts
  std::vector<std::vector<Group>> groups;      // indexed by node; empty for hosts
  std::vector<uint32_t> hosts;                 // node index of h<i> at position i
  std::vector<uint32_t> switches;              // node indices of switches, in node order
  RouteStyle route_style = RouteStyle::per_host;  // the style actually generated
  // Read from a file that numbers its nodes (kind hpcc): the file's id of
  // nodes[i]. Empty for built topologies, whose host h<i> is id i wherever an
  // id is written (flows.hpcc.txt, fct.txt).
  std::vector<uint32_t> file_ids;
  // M-LAG (leaf_spine mlag): [node] -> the port of its peer link, kNoNode for
  // a switch in no pair and for hosts. Empty without M-LAG.
  std::vector<uint32_t> mlag_peer_port;
  // The M-LAG peer-link port of node n, or kNoNode.
  uint32_t peer_link_port(uint32_t n) const { return n < mlag_peer_port.size() ? mlag_peer_port[n] : kNoNode; }

  // Derived by finalize():
  std::vector<std::vector<uint32_t>> port_link;  // [node][port] -> index into links
  std::unordered_map<std::string, uint32_t> by_name;

  // Node index by name, or kNoNode.
  uint32_t find(const std::string& name) const;
  // The other end of the link on port p. Throws std::out_of_range on a bad reference.
  PortRef peer(PortRef p) const;
  // The link on port p. Throws std::out_of_range on a bad reference.
  const LinkSpec& link_at(PortRef p) const;
  // IPv4 address of h<i>. Throws std::out_of_range if there is no h<i>.
  uint32_t host_ip(uint32_t i) const;
  // h-index of the host with this address, or kNoNode.
  uint32_t host_by_ip(uint32_t ip) const;
  // Locally administered MAC of (node, port); see the scheme above.
  // Throws std::out_of_range on a bad reference.
  uint64_t mac_of(uint32_t node, uint32_t port) const;
  // "leaf_spine: 256 hosts, 20 switches, 320 links, 5120 routes".
  std::string summary() const;
};

// Checks a hand-made (or builder-made) topology and derives everything else:
// every port on exactly one link, hosts with one port (or two to two different
// switches: dual-homed), unique names, host
// indices 0..H-1 in node order with ip == host_ip_of(index), positive rates;
// fills port_link, by_name, hosts, switches, then generates routes and groups.
// Throws std::invalid_argument naming the offending node/port/link.
void finalize(Topology& t, RouteStyle style = RouteStyle::automatic);

// Regenerates routes and groups from the links (finalize() calls it).
// Cost: one BFS over the switch graph per switch that has hosts attached, so
// O(edge switches x (switches + fabric links)).
void generate_routes(Topology& t, RouteStyle style = RouteStyle::automatic);

}  // namespace rocesim::topology
