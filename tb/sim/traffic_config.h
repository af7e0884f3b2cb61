// Reading the `traffic:` generators of a scenario (tb/traffic) into flows.
// One key table per generator kind (traffic_config.cpp, config_util.h) drives
// the reading (with validation), the entry written to config.resolved.yaml
// and the key reference of docs/config.md.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "traffic/traffic.h"

namespace rocesim::sim {

struct Scenario;

// One `traffic:` entry as resolved: a YAML flow map written from the kind's
// key table, every key with its value in force (defaults included), host
// lists as `all`, a range or a list, files as absolute paths.
struct TrafficEntry {
  std::string text;
};

// Generates the flows of every `traffic:` entry (seeded per entry from the run
// seed); throws core::ConfigError on bad input (names the entry's key).
std::vector<traffic::Flow> read_traffic(const core::CfgNode& root, const Scenario& s,
                                        std::vector<TrafficEntry>& entries);

// The generator kinds, in the order docs/config.md lists them.
const std::vector<std::string>& traffic_kinds();
// The Markdown key table of one kind ("" for an unknown kind).
std::string traffic_key_reference(const std::string& kind);

}  // namespace rocesim::sim
