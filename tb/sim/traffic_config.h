// Reading the `traffic:` generators of a scenario (tb/traffic) into flows.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "traffic/traffic.h"

namespace rocesim::sim {

struct Scenario;

// One `traffic:` entry as written (kept for the resolved config).
struct TrafficEntry {
  std::string text;  // the entry re-emitted as a YAML flow map
};

// Generates the flows of every `traffic:` entry (seeded per entry from the run
// seed); throws core::ConfigError on bad input (names the entry's key).
std::vector<traffic::Flow> read_traffic(const core::CfgNode& root, const Scenario& s,
                                        std::vector<TrafficEntry>& entries);

}  // namespace rocesim::sim
