// Limits up front: the memory and output volume a run will need, estimated
// from the scenario alone (no model built), checked against a budget before
// anything is elaborated or written.
//
// Memory is the peak resident set the run is expected to reach: the model's
// fixed structures per host, switch, switch port, route and flow (constants
// measured with /usr/bin/time -v on this build, see docs/config.md "Limits"),
// plus what traffic can fill: packet-buffer cells are touched lazily (calloc,
// LIFO free list), so the cells a run touches are at most its peak buffer
// occupancy, which is at most every switch's whole buffer and at most all the
// bytes the flows send (in cells, with a packet descriptor per frame).
// Capture writers add their I/O buffers.
//
// Output is an upper bound on the bytes written: queues.csv one row per
// sample (sim.duration / stats.interval) for every switch port x queue that
// traffic can use (the flows' priorities, plus the CNP priority with DCQCN);
// flow_series.csv one row per sample per flow, and never more rows than the
// flows have packets; each capture direction at most line rate x sim.duration,
// as pcap records (16 B header + at most the snap length) are never longer
// than the frame's time on the wire (preamble, IFG); flows.csv and
// flows.hpcc.txt one line per flow. pfc.csv and cc.csv are event logs whose
// length depends on the dynamics: not included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "link/pcap.h"
#include "sim/scenario.h"

namespace rocesim::sim {

// Default budgets (sim.max_memory, sim.max_output): the machines this runs on
// have 24 GiB of RAM; 4 GiB is left to the OS and other processes.
inline constexpr uint64_t kDefaultMaxMemory = 20ull << 30;
inline constexpr uint64_t kDefaultMaxOutput = 4ull << 30;

// Snap length of a capture (link/pcap.h): the whole frame, a byte count, or
// the frame's headers only.
inline constexpr uint32_t kSnapFull = link::PcapWriter::kSnapFull;
inline constexpr uint32_t kSnapHeaders = link::PcapWriter::kSnapHeaders;

struct EstimateItem {
  std::string what;    // "switch ports", "queues.csv"
  uint64_t bytes = 0;
  std::string detail;  // "640 x 36 KiB"
};

struct Estimate {
  uint64_t memory_bytes = 0;
  uint64_t output_bytes = 0;
  std::vector<EstimateItem> memory, output;  // the terms, largest first
  // "memory ~1.2 GiB (switch ports 640 x 36 KiB = 22.5 MiB, ...)": the total
  // and its `terms` largest terms.
  std::string memory_text(size_t terms = 3) const;
  std::string output_text(size_t terms = 3) const;
};

// A capture to estimate: the line rate of the port (both directions are written).
struct CaptureSpec {
  uint64_t rate_bps = 0;
};

// The estimate for this scenario with these captures at this snap length
// (kSnapFull, kSnapHeaders or 1..65535). Saturates at UINT64_MAX.
Estimate estimate(const Scenario& s, const std::vector<CaptureSpec>& captures, uint32_t snaplen);

// Empty when the estimate fits sim.max_memory and sim.max_output (0 = no
// limit), else the one-line reason, naming the key that was exceeded through
// `key` ("sim.max_memory" / "sim.max_output").
std::string check_budget(const Scenario& s, const Estimate& e, std::string& key);

// Bytes as a short human text with 3 significant digits: "1.23 GiB", "512 B".
std::string bytes_text(uint64_t bytes);

}  // namespace rocesim::sim
