// libFuzzer target: the YAML config loader with --set overrides
// (tlm/core/config.cpp) and the scenario reader with its validation
// (tb/sim/scenario.cpp read_scenario, switch/PFC/traffic sections).
//
// Input layout: the YAML document, then optionally NUL-separated --set
// arguments ("doc\0a.b=1\0c=2"), at most 8. The document is named as if it
// were configs/scenarios/fuzz.yaml of this source tree, so the relative paths
// the shipped scenarios use (../topologies/leaf_spine.yaml) resolve.
//
// Contract: bad input throws core::ConfigError (the CLI prints it and exits
// 2); any other exception, a crash, UB or a leak is a finding. An accepted
// scenario has its topology built by read_scenario(); it must then emit a
// resolved configuration (emit_resolved) without crashing. No simulation is
// elaborated (SystemC elaborates once per process).
//
// Caps of this harness (not of rocesim), so that libFuzzer's -rss_limit_mb=2048
// and -timeout=10 measure robustness rather than size:
//  - Topology parameters are bounded (kTopologyBounds: a few hundred hosts).
//  - Work per input is capped at kBudgetBytes allocated in total: a config
//    that legitimately asks for a huge topology or millions of flows (fat_tree
//    k: 62 allocates gigabytes while validating) is skipped when it reaches
//    the cap. Refusing such configs up front with an estimate is issue 10
//    item 3, not the reader's job here.
//  - Scalars that name files outside this source tree's configs/ (absolute
//    paths, or '..' other than the leading "../topologies/") are skipped:
//    /dev/zero or /dev/stdin would make any file reader block or grow
//    without end, which is the caller's choice of file, not a parser bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/config.h"
#include "sim/scenario.h"

#ifndef ROCESIM_SOURCE_DIR
#error "ROCESIM_SOURCE_DIR must name the source tree"
#endif

namespace {

constexpr size_t kBudgetBytes = size_t(256) << 20;  // total allocated per input
constexpr size_t kMaxSets = 8;

// ---------------------------------------------------------------- allocation budget

struct BudgetExceeded : std::bad_alloc {
  const char* what() const noexcept override { return "fuzz harness allocation budget exceeded"; }
};

bool g_counting = false;
size_t g_allocated = 0;

void* counted_new(size_t n) {
  if (g_counting) {
    g_allocated += n;
    if (g_allocated > kBudgetBytes) {
      g_counting = false;  // the exception object and unwinding may allocate
      throw BudgetExceeded();
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

[[noreturn]] void finding(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_config: %s %s\n", what, detail.c_str());
  std::abort();
}

// ---------------------------------------------------------------- file names

// Whether a scalar may be used as a file name by the readers (see the header).
bool safe_path_text(const std::string& s) {
  if (s.find('/') == std::string::npos) return s.find('\0') == std::string::npos;
  if (s.compare(0, 14, "../topologies/") != 0) return false;
  return s.find("..", 14) == std::string::npos;
}

// Walk the tree (after --set) and check every scalar; false = skip the input.
// Config::record() has already bounded node count and depth, but aliases can
// share subtrees, so the walk has its own bound.
bool safe_tree(const YAML::Node& n, size_t& visited) {
  if (++visited > 100000) return false;
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return safe_path_text(n.Scalar());
    case YAML::NodeType::Sequence:
      for (const YAML::Node& e : n)
        if (!safe_tree(e, visited)) return false;
      return true;
    case YAML::NodeType::Map:
      for (const auto& kv : n)
        if (!safe_tree(kv.first, visited) || !safe_tree(kv.second, visited)) return false;
      return true;
    default: return true;
  }
}

// ---------------------------------------------------------------- topology size

// Largest topology parameters the harness passes on: a few hundred hosts.
// Larger values are valid configs whose validation alone takes minutes
// (fat_tree k: 62 runs over 10 min here, in route generation, without
// reaching the allocation cap), which issue 10 item 3 is to refuse up front.
struct Bound {
  const char* key;
  uint64_t max;
};
constexpr Bound kTopologyBounds[] = {{"hosts", 256},         {"leaves", 16},        {"spines", 16},
                                     {"hosts_per_leaf", 32}, {"links_per_leaf_spine", 4}, {"k", 12},
                                     {"switches", 32},       {"hosts_per_switch", 16}};

// A bounded key passes if it is plain decimal within its bound, or has no
// digit at all (the reader refuses it); anything else (hex, exponents,
// huge values) is skipped rather than risk a huge but valid topology.
bool small_count(const std::string& v, uint64_t max) {
  bool digits = false, plain = true;
  uint64_t n = 0;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      digits = true;
      n = n > max ? n : n * 10 + static_cast<uint64_t>(c - '0');
    } else if (c != ' ') {
      plain = false;
    }
  }
  return !digits || (plain && n <= max);
}

bool small_topology(const YAML::Node& root) {
  if (!root.IsMap()) return true;
  const YAML::Node t = root["topology"];
  if (!t || !t.IsMap()) return true;
  for (const Bound& b : kTopologyBounds) {
    const YAML::Node v = t[b.key];
    if (v && v.IsScalar() && !small_count(v.Scalar(), b.max)) return false;
  }
  return true;
}

void one_input(const std::string& doc, const std::vector<std::string>& sets) {
  using namespace rocesim;
  static const std::string name = std::string(ROCESIM_SOURCE_DIR) + "/configs/scenarios/fuzz.yaml";
  try {
    std::unique_ptr<core::Config> cfg = core::Config::load_string(doc, name);
    for (const std::string& s : sets) cfg->apply_set(s);
    size_t visited = 0;
    if (!safe_tree(cfg->root().yaml(), visited) || !small_topology(cfg->root().yaml())) return;
    sim::Scenario s = sim::read_scenario(*cfg);
    // The resolved configuration of an accepted scenario (its reading back is
    // issue 10 item 4; here only that emitting it does not crash).
    const std::string resolved = sim::emit_resolved(s);
    if (resolved.empty()) finding("empty resolved configuration");
  } catch (const core::ConfigError& e) {
    // The clean error: one line (ConfigError escapes newlines).
    if (std::string(e.what()).find('\n') != std::string::npos) finding("multi-line ConfigError:", e.what());
  }
}

}  // namespace

// Every replaceable form, so that each new pairs with a delete on malloc/free
// (ASan checks the pairing). Aligned forms are not counted (nothing here uses
// over-aligned types).
void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new(size_t n, std::align_val_t a) {
  if (void* p = std::aligned_alloc(static_cast<size_t>(a), (n + static_cast<size_t>(a) - 1) / static_cast<size_t>(a) * static_cast<size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

// The scenario reader links libraries that use SystemC types (link, switch),
// and libsystemc wants an sc_main; libFuzzer owns main() and no simulation is
// ever elaborated here.
int sc_main(int, char**) { std::abort(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* b = reinterpret_cast<const char*>(data);
  const char* end = b + size;
  const char* nul = static_cast<const char*>(std::memchr(b, 0, size));
  std::string doc(b, nul ? nul : end);
  std::vector<std::string> sets;
  for (const char* p = nul; p && p < end && sets.size() < kMaxSets;) {
    const char* q = p + 1;
    const char* next = static_cast<const char*>(std::memchr(q, 0, size_t(end - q)));
    sets.emplace_back(q, next ? next : end);
    p = next;
  }
  g_allocated = 0;
  g_counting = true;
  try {
    one_input(doc, sets);
  } catch (const BudgetExceeded&) {
    // Skipped: too large for this harness (see the header).
  } catch (const std::exception& e) {
    g_counting = false;
    finding("exception other than ConfigError:", std::string(typeid(e).name()) + ": " + e.what());
  }
  g_counting = false;
  return 0;
}
