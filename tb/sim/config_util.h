// Small readers shared by the scenario's sections.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"

namespace rocesim::sim {

// Host name "h<i>" -> i; false when the name is not of that form.
bool parse_host_name(const std::string& name, uint32_t& index);
// The host `value` names under `key` of n; a ConfigError there if it is not
// h<i> or not one of the topology's `hosts` hosts.
uint32_t host_ref(const core::CfgNode& n, const std::string& key, const std::string& value, uint32_t hosts);
// A file named in a config: relative paths are relative to the config's directory.
std::string resolve_relative(const std::string& config_file, const std::string& path);

}  // namespace rocesim::sim
