#include "sim/config_util.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

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

namespace rocesim::sim {

std::string yaml_quote(const std::string& s) {
  YAML::Emitter e;
  e << s;
  return e.c_str();
}

std::string real_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string mm_text(uint64_t mm) {
  std::string o = std::to_string(mm / 1000);
  if (mm % 1000) {
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03u", static_cast<unsigned>(mm % 1000));
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    o += f;
  }
  return o;
}

std::string absolute_path(const std::string& config_file, const std::string& path) {
  const std::filesystem::path p(resolve_relative(config_file, path));
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(p, ec);
  return ec ? p.string() : a.lexically_normal().string();
}

namespace keys {
std::string range_text(const char* kind, uint64_t min, uint64_t max, std::string (*fmt)(uint64_t)) {
  std::string t = kind;
  if (min == 0 && max == UINT64_MAX) return t;
  if (max == UINT64_MAX) return t + ", at least " + fmt(min);
  return t + ", " + fmt(min) + " .. " + fmt(max);
}
}  // namespace keys

}  // namespace rocesim::sim
