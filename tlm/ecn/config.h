// ECN marker configuration: one per egress (port, queue), or per traffic
// class copied to its queues. A plain struct (no YAML): the scenario reader
// fills it and calls validate() before building a Marker.
//
// Queue lengths and thresholds are in one unit, bytes or cells (in_cells);
// the marker compares numbers and never converts, so the caller passes the
// queue length in the configured unit.
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

  Mode mode = Mode::off;
  Point point = Point::enqueue;
  bool in_cells = false;  // queue length and thresholds in cells instead of bytes

  // threshold
  uint64_t k = 100000;
  // wred: no mark at q <= kmin, Pmax*(q-kmin)/(kmax-kmin) for kmin < q <= kmax,
  // always above kmax. Defaults: HPCC's per-25G values (REFERENCE.md).
  uint64_t kmin = 100000, kmax = 400000;
  double pmax = 0.2;
  // hysteresis
  uint64_t k_high = 200000, k_low = 100000;

  // Problems with the fields the mode uses, one message each; empty when
  // valid. wred: kmin < kmax, kmax - kmin < 2^32 (the fixed-point rule
  // multiplies it by a 32-bit random word), pmax in (0, 1] and not so small
  // that round(pmax * 2^32) is 0; hysteresis: k_low <= k_high.
  std::vector<std::string> validate() const;
};

const char* mode_name(MarkerConfig::Mode m);    // "off" | "threshold" | "wred" | "hysteresis"
const char* point_name(MarkerConfig::Point p);  // "enqueue" | "dequeue"

}  // namespace rocesim::ecn
