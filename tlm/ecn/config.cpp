#include "ecn/config.h"

#include <sstream>
#include <stdexcept>

#include "ecn/marker.h"

namespace rocesim::ecn {

std::vector<std::string> MarkerConfig::validate() const {
  std::vector<std::string> err;
  auto msg = [&](auto&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    err.push_back(os.str());
  };
  switch (mode) {
    case Mode::off:
    case Mode::threshold:
      break;  // any K is meaningful (K = 0: mark whenever anything is queued)
    case Mode::wred:
      if (!(kmin < kmax)) {
        msg("wred: kmin (", kmin, ") must be below kmax (", kmax, ")");
      } else if (kmax - kmin > 0xffffffffull) {
        // The rule multiplies the span by a 32-bit word in 64 bits.
        msg("wred: kmax - kmin (", kmax - kmin, ") must be below 2^32");
      }
      if (!(pmax > 0.0 && pmax <= 1.0)) {
        msg("wred: pmax (", pmax, ") must be in (0, 1]");
      } else if (pmax_fixed(pmax) == 0) {
        msg("wred: pmax (", pmax, ") is below 2^-33 and rounds to probability 0");
      }
      break;
    case Mode::hysteresis:
      if (k_low > k_high) msg("hysteresis: k_low (", k_low, ") must not exceed k_high (", k_high, ")");
      break;
    default:
      msg("mode: unknown value ", int(mode));
  }
  if (point != Point::enqueue && point != Point::dequeue) msg("point: unknown value ", int(point));
  if (unit != Unit::bytes && unit != Unit::cells) msg("unit: unknown value ", int(unit));
  return err;
}

MarkerConfig MarkerConfig::in_unit(Unit u, uint32_t cell_bytes) const {
  if (cell_bytes == 0) throw std::invalid_argument("ecn::MarkerConfig::in_unit: cell_bytes is 0");
  MarkerConfig c = *this;
  if (u == unit) return c;
  c.unit = u;
  auto conv = [&](uint64_t v) -> uint64_t {
    if (u == Unit::cells) return v / cell_bytes + (v % cell_bytes != 0);
    return v > UINT64_MAX / cell_bytes ? UINT64_MAX : v * cell_bytes;  // saturates (never in a valid config)
  };
  c.k = conv(k);
  c.kmin = conv(kmin);
  c.kmax = conv(kmax);
  c.k_high = conv(k_high);
  c.k_low = conv(k_low);
  return c;
}

const char* unit_name(MarkerConfig::Unit u) {
  switch (u) {
    case MarkerConfig::Unit::bytes: return "bytes";
    case MarkerConfig::Unit::cells: return "cells";
  }
  return "?";
}

const char* mode_name(MarkerConfig::Mode m) {
  switch (m) {
    case MarkerConfig::Mode::off: return "off";
    case MarkerConfig::Mode::threshold: return "threshold";
    case MarkerConfig::Mode::wred: return "wred";
    case MarkerConfig::Mode::hysteresis: return "hysteresis";
  }
  return "?";
}

const char* point_name(MarkerConfig::Point p) {
  switch (p) {
    case MarkerConfig::Point::enqueue: return "enqueue";
    case MarkerConfig::Point::dequeue: return "dequeue";
  }
  return "?";
}

}  // namespace rocesim::ecn
