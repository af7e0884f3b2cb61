// HPCC topology files (the ns-3 simulator of Li et al., "HPCC: High Precision
// Congestion Control", SIGCOMM 2019: its simulation/mix/*.txt, read by
// simulation/scratch/third.cc), so its set-ups run unchanged (docs/migration-hpcc.md).
// Plain C++17: no SystemC; errors are core::ConfigError at FILE:LINE:COL.
//
// Format (third.cc's reader, which reads whitespace-separated tokens):
//   line 1:   N S L          node count, switch count, link count
//   then:     S switch ids   (0 <= id < N, distinct; every other id is a host)
//   then L lines, one per link:  src dst rate delay error_rate
//             e.g. "0 320 100Gbps 0.001ms 0"
// rate: a decimal with a unit bps, kbps/Kbps, Mbps, Gbps, Tbps (or b/s, kb/s,
// Kb/s, Mb/s, Gb/s, Tb/s), or bytes per second Bps/KBps/MBps/GBps (B/s, ...),
// as ns-3's DataRate spells them; a whole number of bit/s, 1 Mbps .. 1.6 Tbps.
// delay: a decimal with a unit s, ms, us, ns or ps, as ns-3's Time; a whole
// number of ps, at most 1 s.
// error_rate: 0..1, the probability a frame is lost on the link, each direction
// (third.cc installs it as the receive error model of both ends); 0 leaves the
// link to links.loss (HPCC: ERROR_RATE_PER_LINK). This reader is stricter than
// HPCC's in layout only: the switch ids take whole lines (after line 1, before
// the links), each link is one line of exactly five fields; '#' comments and
// blank lines are allowed.
//
// The Topology built (topology.h's conventions):
//  - hosts are the ids not listed as switches, named h<i> in id order (h<i> is
//    the i-th host id; in HPCC's own files hosts come first, so h<i> is node i);
//    switch id n is `sw<n>`. Topology::file_ids gives each node's id.
//  - ports in the order of the file's link lines: a node's k-th link is its
//    port k (HPCC's net-device index k+1: device 0 is ns-3's loopback).
//  - links in file order, end a = src, end b = dst, with the file's rate,
//    delay (LinkSpec::delay_ps) and error rate (LinkSpec::loss, when > 0).
//  - routes: finalize()'s shortest-path ECMP, which is what third.cc's
//    CalculateRoute builds (a BFS from every host through switches only; at
//    each switch every neighbour one hop closer is a next hop). One difference:
//    parallel links between two nodes are each a member of the group here,
//    while HPCC keeps one per node pair (its neighbour map keeps the last).
// A host must have exactly one link (rocesim's hosts have one port), and
// every switch at least one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "topology/topology.h"

namespace rocesim::topology {

// HPCC's host address of node id (third.cc, node_id_to_ip):
// 0x0b000001 + (id / 256) * 0x10000 + (id % 256) * 0x100, i.e. 11.(id/256).(id%256).1.
// It is unique for ids below 65536 (ip_to_node_id reads 16 bits), which the reader enforces.
constexpr uint32_t hpcc_ip_of(uint32_t id) { return 0x0b000001u + (id / 256) * 0x00010000u + (id % 256) * 0x00000100u; }
inline constexpr uint32_t kMaxHpccNodes = 65536;
// Bounds of a link's rate (those of every rocesim link) and delay.
inline constexpr uint64_t kMinHpccRate = 1000000ull, kMaxHpccRate = 1600000000000ull;
inline constexpr uint64_t kMaxHpccDelay = 1000000000000ull;  // 1 s

// `name` is the file name used in errors, `key_path` the configuration key
// that named the file (e.g. "topology.file").
Topology parse_hpcc_topology(std::string_view text, const std::string& name, const std::string& key_path,
                             RouteStyle style = RouteStyle::automatic);
Topology read_hpcc_topology(const std::string& path, const std::string& key_path,
                            RouteStyle style = RouteStyle::automatic);

// The parsers of the rate and delay fields: "" on success, else the reason.
std::string parse_hpcc_rate(std::string_view text, uint64_t& bps);
std::string parse_hpcc_delay(std::string_view text, uint64_t& ps);

}  // namespace rocesim::topology
