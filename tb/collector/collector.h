// The off-box collector of the flow analytics (issue 14 item 5, the
// article's TDA): reads the flow records every switch exported as JSON lines
// (docs/analytics.md), joins them per flow, rebuilds each direction's path
// through the fabric from the ingress ports, and writes one CSV row per flow.
// Pure functions, no SystemC; a run with switch.analytics calls them at its
// end (tb/sim/analytics_run.h) to write DIR/flow_report.csv.
//
// Contract with the switches: a record's `domain` is the switch's node index
// in the Topology (topology.h), so (domain, ingress_port) names a port and
// Topology::peer() the node the frame came from.
//
// Joining, per flow key (server IP, client IP, client QP, server QP) and
// direction d (c2s, s2c), over every switch that exported the flow:
//   packets    the most packets any one switch counted for d (the deltas of a
//              switch's records summed); switches on the path each see them
//   naks       loss of d: the most NAKs any one switch counted for d. Every
//              switch on the NAKs' path sees each NAK that reaches it, so the
//              switch nearest the NAK's sender (the data receiver) sees the
//              most: a NAK lost after it is still counted, one lost on the
//              receiver's own link is not. Counting one switch (not the sum)
//              is what keeps a NAK seen by three switches from counting three
//              times.
//   nak_switches  where the NAKs for d were seen: "name:count" per switch
//              with any, in the order the NAKs crossed them (d's reverse
//              path), then others by domain.
//   rtt_avg_ns the RTT of d at the first switch of d's path (the one nearest
//              the requester, whose RTT is the NIC's minus its own link): the
//              sample-weighted mean of its records' averages; without a path,
//              the switch with the most samples. rtt_switch names it.
//   throughput_max_bps  the highest any record of d reported.
//   path       sender host, then the switches in the order the frames crossed
//              them: the switch whose ingress port faces the sender, then the
//              one whose ingress faces that switch, and so on; then the
//              receiver host if the last switch is linked to it. A switch
//              that reported d but is not on that chain makes the path
//              incomplete (path_complete = false; the path ends with "?").
//              The ingress port of a switch is that of its last record that
//              has one.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "analytics/analyzer.h"
#include "topology/topology.h"

namespace rocesim::collector {

// Parses JSON lines (one analytics record per line; blank lines skipped) and
// appends them to out. Returns "" or "NAME:LINE: what is wrong" for the first
// bad line (out then holds the lines before it).
std::string read_records(std::istream& in, const std::string& name, std::vector<analytics::FlowRecord>& out);

struct DirReport {
  uint64_t packets = 0;
  uint64_t naks = 0;
  std::vector<std::pair<uint32_t, uint64_t>> nak_switches;  // (domain, NAKs seen), path order first
  bool rtt_valid = false;
  uint64_t rtt_avg_ns = 0;
  uint32_t rtt_switch = topology::kNoNode;
  uint64_t throughput_max_bps = 0;
  std::vector<uint32_t> path;  // node indices: sender host, switches, receiver host when reached
  bool path_complete = false;
};

struct FlowReport {
  uint32_t server_ip = 0, client_ip = 0, client_qp = 0, server_qp = 0;
  uint32_t switches = 0;       // switches that exported the flow
  uint32_t records = 0;
  bool established = false;    // some switch saw the RTU
  DirReport dir[2];            // [analytics::kC2s], [analytics::kS2c]
};

// Joins records per flow; flows in order of their first record. topo may be
// null (no paths, RTT from the switch with the most samples).
std::vector<FlowReport> join(const std::vector<analytics::FlowRecord>& records, const topology::Topology* topo);

// flow_report.csv: a header, then one row per flow (columns in docs/analytics.md).
void write_csv(std::ostream& out, const std::vector<FlowReport>& flows, const topology::Topology* topo);

}  // namespace rocesim::collector
