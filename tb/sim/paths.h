// Path recording (issue 13, docs/ecmp.md "Path recording"): which way every
// flow's frames went through the fabric, hop by hop, per direction.
//
// A switch reports each frame of a flow it admits to an egress queue
// (sw::HopObserver): the switch, ingress and egress port, the group and
// member its ECMP unit or load balancer chose, and the hop's index along the
// frame's way (Packet::hops). The recorder keeps, per (flow, direction, hop
// index), runs of consecutive frames that took the same (switch, ingress,
// egress): a frame that takes another one at that hop closes the run and
// opens the next, so a flow that never moves has one row per hop and a
// rehash, a flowlet move or a link failure adds a row (with its time) at
// each hop that changed. Spraying changes the member per packet: a row per
// frame and hop (say so in docs, it is what spraying does).
//
// Counted frames are exactly the admitted ones: a switch port's tx_frames
// (less its PFC frames) is the sum of the packets of the rows leaving it,
// once nothing was dropped after admission and nothing is still queued.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "packet/packet.h"
#include "switch/switch.h"

namespace rocesim::sim {

class PathRecorder : public sw::HopObserver {
 public:
  // One run of frames of a (flow, direction) at one hop.
  struct Row {
    uint32_t sw = 0, in_port = 0, out_port = 0, group = 0, member = 0;
    uint8_t hop = 0, queue = 0;
    uint64_t first_ps = 0, last_ps = 0;   // admissions of its first and last frame
    uint64_t packets = 0, bytes = 0;      // bytes: frame bytes with FCS (as ports' tx_bytes)
  };
  static constexpr size_t kDirs = static_cast<size_t>(packet::PathDir::count_);

  // flows: the run's flow count (ids 0..flows-1); switch_names: by switch index.
  PathRecorder(size_t flows, std::vector<std::string> switch_names);

  void on_hop(uint32_t sw, packet::Packet& p, const sw::Hop& h) override;

  // The way the last frame went, hop by hop: "leaf0:16>18 spine2:0>5 leaf5:18>3"
  // (SWITCH:IN>OUT per hop; empty when no frame of f went that way).
  std::string current_path(size_t f, packet::PathDir d) const;
  // Times a hop of f's direction d changed (rows beyond the first at each hop).
  uint64_t changes(size_t f, packet::PathDir d) const;
  // paths.csv (docs/outputs.md): every row, by flow, direction, hop and time.
  std::string csv() const;

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr size_t kInlineHops = 6;  // a 3-tier Clos path has 5 switches
  // Per hop index the open row (or kNone): the first kInlineHops in place, so
  // a frame that repeats its flow's hop touches this record and its row only
  // (in a large fabric both are cold at each frame: every line is a miss).
  struct Dir {
    std::vector<Row> rows;  // in opening order
    std::array<uint32_t, kInlineHops> cur;
    std::vector<uint32_t> more;  // hop indices kInlineHops and up
    Dir() { cur.fill(kNone); }
    size_t hops() const { return kInlineHops + more.size(); }
    uint32_t open(size_t i) const {
      return i < kInlineHops ? cur[i] : i - kInlineHops < more.size() ? more[i - kInlineHops] : kNone;
    }
    uint32_t& slot(size_t i) {
      if (i < kInlineHops) return cur[i];
      if (more.size() <= i - kInlineHops) more.resize(i - kInlineHops + 1, kNone);
      return more[i - kInlineHops];
    }
  };
  std::vector<Dir> m_dirs;       // flow * kDirs + direction
  std::vector<std::string> m_names;
};

}  // namespace rocesim::sim

namespace rocesim::sim {

class Fabric;

// ecmp_members.csv (docs/outputs.md): per switch, group and member, its port,
// whether it is up at the end, and the frames and bytes it was given.
std::string ecmp_members_csv(const Fabric& f);
// summary.json's "ecmp" member (a line ending in ",\n"; empty when the run has
// no group of two or more members): per tier (switch role), the ports that
// are members of such groups, their bytes summed over those groups, and the
// busiest port's bytes over the mean (imbalance_max_over_mean).
std::string ecmp_summary_json(const Fabric& f);

}  // namespace rocesim::sim
