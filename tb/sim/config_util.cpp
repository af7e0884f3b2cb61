#include "sim/config_util.h"

namespace rocesim::sim {

bool parse_host_name(const std::string& name, uint32_t& index) {
  if (name.size() < 2 || name[0] != 'h') return false;
  uint64_t v = 0;
  for (size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    if (i == 1 && name[i] == '0' && name.size() > 2) return false;  // no leading zeros
    v = v * 10 + static_cast<uint64_t>(name[i] - '0');
    if (v > 1000000) return false;
  }
  index = static_cast<uint32_t>(v);
  return true;
}

uint32_t host_ref(const core::CfgNode& f, const std::string& key, const std::string& value, uint32_t hosts) {
  uint32_t idx = 0;
  if (!parse_host_name(value, idx)) f.fail_key(key, "expected a host name h<i>, got '" + value + "'");
  if (idx >= hosts)
    f.fail_key(key, "no host '" + value + "': the topology has h0..h" + std::to_string(hosts - 1));
  return idx;
}

std::string resolve_relative(const std::string& config_file, const std::string& path) {
  const size_t slash = config_file.rfind('/');
  if (path.empty() || path[0] == '/' || slash == std::string::npos) return path;
  return config_file.substr(0, slash + 1) + path;
}

}  // namespace rocesim::sim
