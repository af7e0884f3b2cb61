// Topology builders: single switch, two-tier leaf-spine, three-tier k-ary fat-tree.
// Each returns a finalized Topology (routes generated, see topology.h for the
// addressing and the routing rule). Bad parameters throw std::invalid_argument
// whose message names the parameter (by its YAML key) and the bound, e.g.
// "fat_tree.k = 3: must be even and >= 2".
#pragma once

#include <cstdint>

#include "topology/topology.h"

namespace rocesim::topology {

// One switch "sw0" (role "sw") with H hosts: h<i> on port i, nothing else.
// Links: links[i] = h<i>:0 <-> sw0:i.
struct SingleParams {
  uint32_t hosts = 16;                        // 1..kMaxHosts
  uint64_t host_rate = 100'000'000'000ull;    // bps, > 0
  uint64_t cable_mm = 2000;
  RouteStyle routes = RouteStyle::automatic;
};
Topology single_switch(const SingleParams& p = {});

// Two-tier leaf-spine (the seed article's default fabric with the defaults:
// 16 leaves x 16 hosts at 25 Gbps, 4 spines at 100 Gbps, 256 hosts).
// Nodes: h0.. first, then leaf0..leaf{L-1}, then spine0..spine{S-1}.
// Hosts of leaf l are h(l*hpl) .. h(l*hpl + hpl - 1), host j of the leaf on leaf port j.
// Leaf l ports: 0..hpl-1 to its hosts; hpl + s*links_per_leaf_spine + k is the
// k-th link to spine s. Spine s port l*links_per_leaf_spine + k is the k-th link to leaf l.
// Links: host links (h-order), then for l, s, k: leaf l <-> spine s (end a = leaf).
struct LeafSpineParams {
  uint32_t leaves = 16;
  uint32_t spines = 4;
  uint32_t hosts_per_leaf = 16;
  uint64_t host_rate = 25'000'000'000ull;     // bps, host <-> leaf
  uint64_t fabric_rate = 100'000'000'000ull;  // bps, leaf <-> spine
  uint32_t links_per_leaf_spine = 1;          // parallel links per (leaf, spine) pair
  uint64_t host_cable_mm = 2000;
  uint64_t fabric_cable_mm = 10000;
  RouteStyle routes = RouteStyle::automatic;
  // M-LAG pairs (the seed article's figure 3): leaves must be even; pair k is
  // (leaf 2k, leaf 2k+1), joined by one peer link; the pair's 2*hosts_per_leaf
  // hosts h(2k*hpl) .. h(2k*hpl + 2*hpl - 1) are each dual-homed: host j of the
  // pair on port j of both leaves, its port 0 to leaf 2k and port 1 to leaf 2k+1.
  // Leaf ports: 0..2*hpl-1 hosts; 2*hpl + s*links_per_leaf_spine + k spines;
  // the last one (2*hpl + spines*links_per_leaf_spine) the peer link.
  // Links: host port-0 links (h-order), host port-1 links (h-order), fabric
  // links as above, then the peer links (pair order, end a = leaf 2k, port = last).
  // The host count is leaves * hosts_per_leaf either way.
  bool mlag = false;
  uint64_t peer_rate = 0;                     // bps of a peer link; 0: fabric_rate
  uint64_t peer_cable_mm = 0;                 // 0: fabric_cable_mm
};
// The peer-link port of an M-LAG leaf built with p (the last port).
inline uint32_t mlag_peer_port(const LeafSpineParams& p) {
  return 2 * p.hosts_per_leaf + p.spines * p.links_per_leaf_spine;
}
// Bounds: every count >= 1; leaves * hosts_per_leaf <= kMaxHosts;
// leaves <= kMaxLeaves; leaves * spines * links_per_leaf_spine <= kMaxFabricLinks;
// ports per switch <= kMaxPortsPerNode. kMaxLeaves and kMaxFabricLinks bound route generation
// (one BFS per leaf over the fabric links): the default builds in well under a
// millisecond, 1024 leaves x 256 spines in ~1.5 s, 4096 x 64 (the corner) in ~5 s.
inline constexpr uint64_t kMaxLeaves = 4096;
inline constexpr uint64_t kMaxFabricLinks = 1u << 18;
Topology leaf_spine(const LeafSpineParams& p = {});

// Three-tier k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008), with
// h = k/2: k pods of h edge ("tor") and h aggregation ("agg") switches,
// h^2 core switches, k^3/4 hosts; every switch has k ports, every link runs at `rate`.
// Numbering:
//   pod p, position e (0 <= e < h):  tor(p*h + e), agg(p*h + e)
//   tor t:   port j < h        -> host h(t*h + j), port 0
//            port h + a        -> agg a of the same pod, its port (t mod h)
//   agg g:   port e < h        -> tor e of the same pod, its port (h + g mod h)
//            port h + c        -> core((g mod h)*h + c), its port (pod of g)
//   core c:  port p            -> agg (c / h) of pod p, i.e. agg(p*h + c/h)
// So core c belongs to "core group" c/h, which serves agg position c/h of every pod.
// Nodes: hosts, then tor0.., agg0.., core0... Links: host links (h-order), then
// tor-agg links (for each tor t, a), then agg-core links (for each agg g, c).
// Shortest paths: same tor 1 switch hop, same pod 3, other pod 5.
// Build time: k=8 ~1 ms; k=62 (59582 hosts, automatic -> aggregated routes) ~2 s.
struct FatTreeParams {
  uint32_t k = 4;                          // even, >= 2, k^3/4 <= kMaxHosts (k <= 62)
  uint64_t rate = 100'000'000'000ull;      // bps, every link
  uint64_t cable_mm = 2000;                // every link
  RouteStyle routes = RouteStyle::automatic;
};
Topology fat_tree(const FatTreeParams& p = {});

// A ring of switches `ring<i>`, each with `hosts_per_switch` hosts. Switch i:
// ports 0..H-1 to its hosts (h(i*H) .. h(i*H+H-1)), port H to ring<i+1>
// (clockwise), port H+1 to ring<i-1>. With `clockwise`, every route between
// switches goes clockwise only (instead of the shortest way): traffic two hops
// apart then forms a cyclic buffer dependency, the textbook PFC deadlock
// (Hu et al., "Deadlocks in Datacenter Networks", HotNets 2016).
struct RingParams {
  uint32_t switches = 4;                    // >= 3
  uint32_t hosts_per_switch = 1;
  uint64_t rate = 100'000'000'000ull;
  uint64_t cable_mm = 2000;
  bool clockwise = true;
};
Topology ring(const RingParams& p = {});

}  // namespace rocesim::topology
