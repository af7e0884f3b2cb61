#include "topology/topology.h"

#include <algorithm>
#include <unordered_map>
#include <stdexcept>

namespace rocesim::topology {

namespace {

constexpr uint32_t kInf = 0xffffffffu;

std::string port_text(const Topology& t, PortRef p) {
  const std::string n = p.node < t.nodes.size() ? t.nodes[p.node].name : "node#" + std::to_string(p.node);
  return n + ":" + std::to_string(p.port);
}

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("topology: " + what); }

// Interns port sets per switch: identical sets share one group.
class GroupInterner {
 public:
  explicit GroupInterner(std::vector<Group>& out) : m_out(out) {}
  uint32_t intern(const std::vector<uint32_t>& ports) {
    // The last set interned repeats often (every attachment switch behind the
    // same uplinks), so it is checked before the hash table.
    if (m_last != kInf && m_out[m_last].ports == ports) return m_last;
    auto it = m_ids.find(ports);
    if (it != m_ids.end()) return m_last = it->second;
    const uint32_t id = static_cast<uint32_t>(m_out.size());
    m_out.push_back(Group{ports});
    m_ids.emplace(ports, id);
    return m_last = id;
  }

 private:
  struct Hash {
    size_t operator()(const std::vector<uint32_t>& v) const {
      uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the port numbers
      for (uint32_t p : v) h = (h ^ p) * 0x100000001b3ull;
      return static_cast<size_t>(h);
    }
  };
  std::vector<Group>& m_out;
  std::unordered_map<std::vector<uint32_t>, uint32_t, Hash> m_ids;
  uint32_t m_last = kInf;
};

// Appends the fewest aligned prefixes covering exactly [lo, hi].
void cover_range(uint32_t lo, uint32_t hi, uint32_t group, std::vector<Route>& out) {
  uint64_t a = lo;
  const uint64_t end = static_cast<uint64_t>(hi) + 1;
  while (a < end) {
    // Largest block aligned at a that fits in [a, end).
    uint32_t len = 32;
    while (len > 0) {
      const uint64_t size = 1ull << (32 - (len - 1));
      if ((a & (size - 1)) != 0 || a + size > end) break;
      --len;
    }
    out.push_back(Route{static_cast<uint32_t>(a), static_cast<uint8_t>(len), group});
    a += 1ull << (32 - len);
  }
}

}  // namespace

std::string ip_to_string(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

uint32_t Topology::find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? kNoNode : it->second;
}

const LinkSpec& Topology::link_at(PortRef p) const {
  if (p.node >= port_link.size() || p.port >= port_link[p.node].size())
    throw std::out_of_range("topology: no port " + port_text(*this, p));
  return links[port_link[p.node][p.port]];
}

PortRef Topology::peer(PortRef p) const {
  const LinkSpec& l = link_at(p);
  return l.a == p ? l.b : l.a;
}

uint32_t Topology::host_ip(uint32_t i) const {
  if (i >= hosts.size()) throw std::out_of_range("topology: no host h" + std::to_string(i));
  return nodes[hosts[i]].ip;
}

uint32_t Topology::host_by_ip(uint32_t ip) const {
  // finalize() enforces ip == host_ip_of(index), so the mapping is arithmetic.
  const uint32_t i = ip - host_ip_of(0);
  return i < hosts.size() ? i : kNoNode;
}

uint64_t Topology::mac_of(uint32_t node, uint32_t port) const {
  if (node >= nodes.size() || port >= nodes[node].ports)
    throw std::out_of_range("topology: no port " + port_text(*this, PortRef{node, port}));
  const Node& n = nodes[node];
  if (n.kind == Node::host) return 0x020000000000ull | n.index;
  return 0x028000000000ull | (static_cast<uint64_t>(node) << 16) | port;
}

std::string Topology::summary() const {
  size_t nroutes = 0;
  for (const auto& r : routes) nroutes += r.size();
  return kind + ": " + std::to_string(hosts.size()) + " hosts, " + std::to_string(switches.size()) +
         " switches, " + std::to_string(links.size()) + " links, " + std::to_string(nroutes) + " routes";
}

void finalize(Topology& t, RouteStyle style) {
  if (t.nodes.size() > kMaxNodes)
    bad(std::to_string(t.nodes.size()) + " nodes: must be <= " + std::to_string(kMaxNodes));
  t.by_name.clear();
  t.hosts.clear();
  t.switches.clear();
  t.port_link.assign(t.nodes.size(), {});
  for (uint32_t n = 0; n < t.nodes.size(); ++n) {
    const Node& nd = t.nodes[n];
    if (nd.name.empty()) bad("node #" + std::to_string(n) + " has no name");
    if (!t.by_name.emplace(nd.name, n).second) bad("duplicate node name '" + nd.name + "'");
    if (nd.ports == 0) bad("node " + nd.name + " has no ports");
    if (nd.ports > kMaxPortsPerNode)
      bad("node " + nd.name + " has " + std::to_string(nd.ports) + " ports: must be <= " +
          std::to_string(kMaxPortsPerNode));
    if (nd.kind == Node::host) {
      // 2 ports: dual-homed (M-LAG), checked once the links are known.
      if (nd.ports != 1 && nd.ports != 2)
        bad("host " + nd.name + " has " + std::to_string(nd.ports) + " ports: must be 1 (or 2, dual-homed)");
      // Hosts first and in h-order keep node index == h-index, which the
      // addressing and host_by_ip() rely on.
      if (nd.index != n || !t.switches.empty())
        bad("host " + nd.name + " is node #" + std::to_string(n) + " with index " + std::to_string(nd.index) +
            ": hosts must come first, in index order");
      if (nd.ip != host_ip_of(nd.index))
        bad("host " + nd.name + " has ip " + ip_to_string(nd.ip) + ", expected " + ip_to_string(host_ip_of(nd.index)));
      t.hosts.push_back(n);
    } else {
      t.switches.push_back(n);
    }
    t.port_link[n].assign(nd.ports, kInf);
  }
  if (t.hosts.size() > kMaxHosts)
    bad(std::to_string(t.hosts.size()) + " hosts: must be <= " + std::to_string(kMaxHosts));

  for (uint32_t li = 0; li < t.links.size(); ++li) {
    const LinkSpec& l = t.links[li];
    if (l.rate_bps == 0) bad("link #" + std::to_string(li) + " has rate 0: must be > 0");
    for (PortRef p : {l.a, l.b}) {
      if (p.node >= t.nodes.size() || p.port >= t.nodes[p.node].ports)
        bad("link #" + std::to_string(li) + " ends at nonexistent port " + port_text(t, p));
      uint32_t& slot = t.port_link[p.node][p.port];
      if (slot != kInf)
        bad("port " + port_text(t, p) + " is on links #" + std::to_string(slot) + " and #" + std::to_string(li));
      slot = li;
    }
  }
  for (uint32_t n = 0; n < t.nodes.size(); ++n)
    for (uint32_t p = 0; p < t.nodes[n].ports; ++p)
      if (t.port_link[n][p] == kInf) bad("port " + port_text(t, PortRef{n, p}) + " is not connected");
  // A dual-homed host's two ports go to two different switches (an M-LAG
  // pair); anything else (host-to-host, both ports on one switch) is refused.
  for (uint32_t h : t.hosts) {
    if (t.nodes[h].ports != 2) continue;
    const PortRef u0 = t.peer(PortRef{h, 0}), u1 = t.peer(PortRef{h, 1});
    for (PortRef u : {u0, u1})
      if (t.nodes[u.node].kind != Node::sw)
        bad("dual-homed host " + t.nodes[h].name + " has a port to " + port_text(t, u) + ": must be a switch");
    if (u0.node == u1.node)
      bad("dual-homed host " + t.nodes[h].name + " has both ports on " + t.nodes[u0.node].name +
          ": must be two different switches");
  }

  generate_routes(t, style);
}

void generate_routes(Topology& t, RouteStyle style) {
  const uint32_t nn = static_cast<uint32_t>(t.nodes.size());
  if (t.port_link.size() != nn) bad("generate_routes() needs a finalized topology");
  const uint64_t host_routes = static_cast<uint64_t>(t.switches.size()) * t.hosts.size();
  if (style == RouteStyle::automatic)
    style = host_routes <= kAutoPerHostRoutes ? RouteStyle::per_host : RouteStyle::aggregated;
  if (style == RouteStyle::per_host && host_routes > kMaxPerHostRoutes)
    bad("per_host routes: " + std::to_string(t.switches.size()) + " switches x " + std::to_string(t.hosts.size()) +
        " hosts = " + std::to_string(host_routes) + " routes: must be <= " + std::to_string(kMaxPerHostRoutes) +
        " (use aggregated)");
  t.route_style = style;
  t.routes.assign(nn, {});
  t.groups.assign(nn, {});

  // Distance to a host h is 1 + distance to the nearest switch it hangs off
  // (its only neighbour, or either member of the M-LAG pair a dual-homed host
  // hangs off), and hosts never forward. So every host on the same attachment
  // (one switch, or one pair) has the same next-hop set everywhere except at
  // the attachment's own switches, and one multi-source BFS per attachment
  // over the switch-only graph gives the general per-host shortest-path ECMP
  // sets exactly. A pair's peer link is never a next hop toward its hosts:
  // both members are at distance 0.
  std::vector<uint32_t> attach_of_host(t.hosts.size(), kNoNode);  // index into `attach`, or kNoNode
  std::vector<std::pair<uint32_t, uint32_t>> attach;              // (switch, switch or kNoNode), first-seen order
  std::unordered_map<uint64_t, uint32_t> attach_id;
  for (uint32_t i = 0; i < t.hosts.size(); ++i) {
    const PortRef up = t.peer(PortRef{t.hosts[i], 0});
    if (t.nodes[up.node].kind != Node::sw) continue;  // host-to-host cable: nothing to route
    uint32_t second = kNoNode;
    if (t.nodes[t.hosts[i]].ports == 2) second = t.peer(PortRef{t.hosts[i], 1}).node;
    const uint32_t lo = second == kNoNode ? up.node : std::min(up.node, second);
    const uint32_t hi = second == kNoNode ? kNoNode : std::max(up.node, second);
    const uint64_t key = static_cast<uint64_t>(lo) << 32 | hi;
    auto it = attach_id.find(key);
    if (it == attach_id.end()) {
      it = attach_id.emplace(key, static_cast<uint32_t>(attach.size())).first;
      attach.emplace_back(lo, hi);
    }
    attach_of_host[i] = it->second;
  }

  // Switch-only adjacency: (port, peer switch) per switch, flat.
  std::vector<uint32_t> sw_ord(nn, kNoNode);
  for (uint32_t s = 0; s < t.switches.size(); ++s) sw_ord[t.switches[s]] = s;
  const uint32_t ns = static_cast<uint32_t>(t.switches.size());
  std::vector<uint32_t> adj_begin(ns + 1, 0);
  std::vector<std::pair<uint32_t, uint32_t>> adj;  // (local port, peer switch ordinal)
  for (uint32_t s = 0; s < ns; ++s) {
    const uint32_t n = t.switches[s];
    for (uint32_t p = 0; p < t.nodes[n].ports; ++p) {
      const PortRef q = t.peer(PortRef{n, p});
      if (t.nodes[q.node].kind == Node::sw) adj.emplace_back(p, sw_ord[q.node]);
    }
    adj_begin[s + 1] = static_cast<uint32_t>(adj.size());
  }

  std::vector<GroupInterner> interners;
  interners.reserve(ns);
  for (uint32_t s = 0; s < ns; ++s) interners.emplace_back(t.groups[t.switches[s]]);

  // toward[s * na + a]: group at switch s toward hosts on attachment switch a
  // (switch-major: the per-switch pass below reads one contiguous row).
  const size_t na = attach.size();
  std::vector<uint32_t> toward(na * ns, kNoRoute);
  std::vector<uint32_t> dist(ns);
  std::vector<uint32_t> queue(ns);
  std::vector<uint32_t> ports;
  for (uint32_t a = 0; a < attach.size(); ++a) {
    std::fill(dist.begin(), dist.end(), kInf);
    size_t head = 0, tail = 0;
    for (uint32_t sn : {attach[a].first, attach[a].second}) {
      if (sn == kNoNode) continue;
      dist[sw_ord[sn]] = 0;
      queue[tail++] = sw_ord[sn];
    }
    // One pass per switch, in BFS order (so group numbering is deterministic
    // and tidy): when s is dequeued, every switch one hop closer to the source
    // already has its distance (BFS assigns level d-1 before dequeuing level d),
    // so the same scan of s's edges finds its next hops and discovers level d+1.
    while (head < tail) {
      const uint32_t s = queue[head++];
      ports.clear();
      for (uint32_t e = adj_begin[s]; e < adj_begin[s + 1]; ++e) {
        const uint32_t q = adj[e].second;
        if (dist[q] == kInf) {
          dist[q] = dist[s] + 1;
          queue[tail++] = q;
        } else if (dist[q] + 1 == dist[s]) {
          ports.push_back(adj[e].first);
        }
      }
      // adj is in port order, so `ports` is already sorted.
      if (dist[s] != 0) toward[static_cast<size_t>(s) * na + a] = interners[s].intern(ports);
    }
  }

  // finalize() enforces ip == host_ip_of(index), so h-index order is address
  // order. Hosts come in segments: maximal runs of consecutive hosts on one
  // attachment switch (a leaf's or tor's hosts), which share their group at
  // every other switch. So each switch's table is built per segment, not per
  // host: O(switches x segments) except at a segment's own switch.
  struct Segment {
    uint32_t first = 0, count = 0, attach = kNoNode;
  };
  std::vector<Segment> segments;
  for (uint32_t i = 0; i < t.hosts.size(); ++i) {
    if (!segments.empty() && segments.back().attach == attach_of_host[i]) {
      ++segments.back().count;
    } else {
      segments.push_back(Segment{i, 1, attach_of_host[i]});
    }
  }

  for (uint32_t s = 0; s < ns; ++s) {
    const uint32_t n = t.switches[s];
    std::vector<Route>& out = t.routes[n];
    // The aggregated style's current run of consecutive addresses with one group.
    uint32_t run_group = kNoRoute, run_lo = 0, run_hi = 0;
    bool in_run = false;
    auto flush = [&] {
      if (in_run && run_group != kNoRoute) cover_range(run_lo, run_hi, run_group, out);
      in_run = false;
    };
    // Hosts first .. first+count-1 (consecutive addresses), all with group g.
    auto emit = [&](uint32_t first, uint32_t count, uint32_t g) {
      const uint32_t lo = host_ip_of(first), hi = host_ip_of(first + count - 1);
      if (style == RouteStyle::per_host) {
        if (g != kNoRoute)
          for (uint32_t ip = lo; ip <= hi; ++ip) out.push_back(Route{ip, 32, g});
        return;
      }
      if (in_run && g == run_group && run_hi != 0xffffffffu && lo == run_hi + 1) {
        run_hi = hi;
        return;
      }
      flush();
      in_run = true;
      run_group = g;
      run_lo = lo;
      run_hi = hi;
    };
    for (const Segment& sg : segments) {
      if (sg.attach == kNoNode) {
        emit(sg.first, sg.count, kNoRoute);
      } else if (attach[sg.attach].first == n || attach[sg.attach].second == n) {
        // The segment's own switch: each host on its own port (the one of its
        // ports that lands here, when dual-homed), interned in h-order.
        for (uint32_t i = sg.first; i < sg.first + sg.count; ++i) {
          PortRef down = t.peer(PortRef{t.hosts[i], 0});
          if (down.node != n) down = t.peer(PortRef{t.hosts[i], 1});
          emit(i, 1, interners[s].intern({down.port}));
        }
      } else {
        emit(sg.first, sg.count, toward[static_cast<size_t>(s) * na + sg.attach]);
      }
    }
    flush();
  }
}

}  // namespace rocesim::topology
