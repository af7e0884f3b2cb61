// ECN marker configuration: one per egress (port, queue), or per traffic
// class copied to its queues. A plain struct (no YAML): the scenario reader
// fills it and calls validate() before building a Marker.
//
// Units: queue lengths and thresholds are in one unit, bytes or cells
// (MarkerConfig::unit); the marker compares numbers and never converts, so
// the caller passes the queue length in the configured unit. Cells are what
// the RTL counts (the MMU's per-queue cell counter); bytes need a byte
// counter per queue next to it. The threshold defaults of the struct are
// bytes (HPCC's per-25G values, REFERENCE.md): k 100000, kmin 100000,
// kmax 400000, k_high 200000, k_low 100000. A cell configuration is the
// same values in cells: in_unit(Unit::cells, cell_bytes) converts every
// threshold, rounding up (e.g. 391, 391, 1563, 782, 391 cells at 256 B).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocesim::ecn {

struct MarkerConfig {
  enum class Mode : uint8_t {
    off,         // never fires (packets are still counted)
    threshold,   // DCTCP-style single threshold: fires when q > k
    wred,        // RED ramp (Floyd & Jacobson 1993) on the instantaneous queue, as DCQCN uses it
    hysteresis,  // fires from the first packet with q > k_high until the first with q < k_low
  };
  // Where the switch consults the marker. The marker itself does not care;
  // the switch reads this to call decide() at enqueue (the queue the packet
  // finds) or at dequeue (the queue it leaves behind; the congestion signal
  // reaches the receiver one queueing delay earlier).
  enum class Point : uint8_t { enqueue, dequeue };

  // What the queue length and every threshold count.
  enum class Unit : uint8_t { bytes, cells };

  Mode mode = Mode::off;
  Point point = Point::enqueue;
  Unit unit = Unit::bytes;  // the defaults below are bytes

  // threshold
  uint64_t k = 100000;  // bytes
  // wred: no mark at q <= kmin, Pmax*(q-kmin)/(kmax-kmin) for kmin < q <= kmax,
  // always above kmax. Defaults: HPCC's per-25G values (REFERENCE.md), bytes.
  uint64_t kmin = 100000, kmax = 400000;
  // Configuration only: the marker uses round(pmax * 2^32) (pmax_fixed() in
  // marker.h), an integer, from its construction on.
  double pmax = 0.2;
  // hysteresis, bytes
  uint64_t k_high = 200000, k_low = 100000;

  // The same configuration with its thresholds in unit u (cell_bytes 0 throws
  // std::invalid_argument):
  // bytes -> cells is ceil(v / cell_bytes), so a cell threshold K_c is never
  // below the byte threshold it came from (K_c * cell_bytes >= K_b): a queue
  // whose cells span at most K_b bytes is never marked because of the
  // rounding; cells -> bytes is v * cell_bytes (exact; saturating). Same unit: a copy.
  MarkerConfig in_unit(Unit u, uint32_t cell_bytes) const;

  // Problems with the fields the mode uses, one message each; empty when
  // valid. wred: kmin < kmax, kmax - kmin < 2^32 (the fixed-point rule
  // multiplies it by a 32-bit random word), pmax in (0, 1] and not so small
  // that round(pmax * 2^32) is 0; hysteresis: k_low <= k_high.
  std::vector<std::string> validate() const;
};

const char* mode_name(MarkerConfig::Mode m);    // "off" | "threshold" | "wred" | "hysteresis"
const char* point_name(MarkerConfig::Point p);  // "enqueue" | "dequeue"
const char* unit_name(MarkerConfig::Unit u);    // "bytes" | "cells"

}  // namespace rocesim::ecn
