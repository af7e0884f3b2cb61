// Small readers shared by the scenario's sections.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/config.h"
#include "core/units.h"

namespace rocesim::sim {

// Host name "h<i>" -> i; false when the name is not of that form.
bool parse_host_name(const std::string& name, uint32_t& index);
// The host `value` names under `key` of n; a ConfigError there if it is not
// h<i> or not one of the topology's `hosts` hosts.
uint32_t host_ref(const core::CfgNode& n, const std::string& key, const std::string& value, uint32_t hosts);
// A file named in a config: relative paths are relative to the config's directory.
std::string resolve_relative(const std::string& config_file, const std::string& path);

}  // namespace rocesim::sim

// ---------------------------------------------------------------------------
// Key tables: one table per config section drives reading (with validation),
// the resolved config (config.resolved.yaml) and the key reference in
// docs/config.md, so the three cannot drift. A Key<S> reads its value from a
// mapping into section struct S (an absent key keeps the value already in S,
// so the caller decides the defaults), writes it back as YAML text that its
// reader accepts and that gives the same value, and describes itself.
#include <functional>
#include <vector>

namespace rocesim::sim {

template <class S>
struct Key {
  std::string name;
  std::string type;          // docs: type and range, e.g. "time, 1ps .. 1h"
  std::string doc;           // docs: meaning
  std::function<void(const core::CfgNode&, const std::string&, S&)> read;
  std::function<std::string(const S&)> emit;  // YAML text (scalar or flow collection); "" = not written
  std::string default_doc;   // docs: default when not emit(S{}) ("" = emit of the defaults)
  bool emitted = true;       // false: read only (a deprecated alias), never written
  // A nested mapping written in block style: its lines at `indent` (emit_keys
  // uses it in place of emit; flow contexts still use emit).
  std::function<std::string(const S&, const std::string& indent)> block;

  Key(std::string name_, std::string type_, std::string doc_,
      std::function<void(const core::CfgNode&, const std::string&, S&)> read_,
      std::function<std::string(const S&)> emit_, std::string default_doc_ = "", bool emitted_ = true)
      : name(std::move(name_)), type(std::move(type_)), doc(std::move(doc_)), read(std::move(read_)),
        emit(std::move(emit_)), default_doc(std::move(default_doc_)), emitted(emitted_) {}
};
template <class S>
using KeyTable = std::vector<Key<S>>;

// YAML text of a string scalar: plain when YAML reads it back as the same
// string, else double-quoted (yaml-cpp's emitter decides: "a: b", "#tag",
// "null", "*ref", "~", leading/trailing spaces, control characters).
std::string yaml_quote(const std::string& s);
// Shortest decimal text that reads back as exactly v (%.15g, else %.17g).
std::string real_text(double v);
// Metres as written from millimetres (0.25, 2, 1.5).
std::string mm_text(uint64_t mm);
// The absolute form of a path named in config_file (relative to its folder);
// the resolved config writes these so it reads the same files from anywhere.
std::string absolute_path(const std::string& config_file, const std::string& path);

// Reads every key of the table into s (n.finish() is the caller's).
template <class S>
void read_keys(const KeyTable<S>& t, const core::CfgNode& n, S& s) {
  for (const Key<S>& k : t) k.read(n, k.name, s);
}
// Block lines "<indent>key: value\n", in table order.
template <class S>
std::string emit_keys(const KeyTable<S>& t, const S& s, const std::string& indent) {
  std::string o;
  for (const Key<S>& k : t) {
    if (k.emitted && k.block) {
      o += indent + k.name + ":\n" + k.block(s, indent + "  ");
      continue;
    }
    const std::string v = k.emitted ? k.emit(s) : "";
    if (!v.empty()) o += indent + k.name + ": " + v + "\n";
  }
  return o;
}
// A flow map "{key: value, ...}".
template <class S>
std::string emit_flow(const KeyTable<S>& t, const S& s) {
  std::string o;
  for (const Key<S>& k : t) {
    const std::string v = k.emitted ? k.emit(s) : "";
    if (!v.empty()) o += (o.empty() ? "" : ", ") + k.name + ": " + v;
  }
  return "{" + o + "}";
}
// Markdown rows "| `prefix+key` | type | `default` | doc |" of the key
// reference, with the defaults emitted from `defaults`.
template <class S>
std::string reference_rows(const KeyTable<S>& t, const S& defaults, const std::string& prefix = "") {
  std::string o;
  for (const Key<S>& k : t) {
    const std::string def = !k.default_doc.empty() ? k.default_doc : "`" + k.emit(defaults) + "`";
    o += "| `" + prefix + k.name + "` | " + k.type + " | " + def + " | " + k.doc + " |\n";
  }
  return o;
}
inline std::string reference_header() { return "| key | type | default | meaning |\n|---|---|---|---|\n"; }

namespace keys {

// k with a default described in words (when it depends on other keys).
template <class S>
Key<S> with_default(Key<S> k, std::string default_doc) {
  k.default_doc = std::move(default_doc);
  return k;
}

// Accessor of one member: ROCESIM_MEMBER(link.rate_bps) works for S and const S.
#define ROCESIM_MEMBER(expr) [](auto& s_) -> auto& { return s_.expr; }

std::string range_text(const char* kind, uint64_t min, uint64_t max, std::string (*fmt)(uint64_t));

// Quantities with a unit (tlm/core/units.h), bounds inclusive.
template <class S, class A>
Key<S> time(std::string name, A acc, uint64_t min, uint64_t max, std::string doc) {
  return {name, range_text("time", min, max, core::format_time), std::move(doc),
          [acc, min, max](const core::CfgNode& n, const std::string& k, S& s) { acc(s) = n.time(k, acc(s), min, max); },
          [acc](const S& s) { return core::format_time(acc(s)); }};
}
template <class S, class A>
Key<S> size(std::string name, A acc, uint64_t min, uint64_t max, std::string doc) {
  return {name, range_text("size", min, max, core::format_size), std::move(doc),
          [acc, min, max](const core::CfgNode& n, const std::string& k, S& s) {
            acc(s) = static_cast<std::remove_reference_t<decltype(acc(s))>>(n.size(k, acc(s), min, max));
          },
          [acc](const S& s) { return core::format_size(acc(s)); }};
}
template <class S, class A>
Key<S> rate(std::string name, A acc, uint64_t min, uint64_t max, std::string doc) {
  return {name, range_text("rate", min, max, core::format_rate), std::move(doc),
          [acc, min, max](const core::CfgNode& n, const std::string& k, S& s) { acc(s) = n.rate(k, acc(s), min, max); },
          [acc](const S& s) { return core::format_rate(acc(s)); }};
}
template <class S, class A>
Key<S> integer(std::string name, A acc, int64_t min, int64_t max, std::string doc) {
  return {name, "integer, " + std::to_string(min) + " .. " + std::to_string(max), std::move(doc),
          [acc, min, max](const core::CfgNode& n, const std::string& k, S& s) {
            using T = std::remove_reference_t<decltype(acc(s))>;
            acc(s) = static_cast<T>(n.integer(k, static_cast<int64_t>(acc(s)), min, max));
          },
          [acc](const S& s) { return std::to_string(acc(s)); }};
}
template <class S, class A>
Key<S> real(std::string name, A acc, double min, double max, std::string doc) {
  return {name, "number, " + real_text(min) + " .. " + real_text(max), std::move(doc),
          [acc, min, max](const core::CfgNode& n, const std::string& k, S& s) { acc(s) = n.real(k, acc(s), min, max); },
          [acc](const S& s) { return real_text(acc(s)); }};
}
template <class S, class A>
Key<S> boolean(std::string name, A acc, std::string doc) {
  return {name, "bool", std::move(doc),
          [acc](const core::CfgNode& n, const std::string& k, S& s) { acc(s) = n.boolean(k, acc(s)); },
          [acc](const S& s) { return std::string(acc(s) ? "true" : "false"); }};
}
// A length in metres (0 .. 100 km) kept in millimetres (rounded to the nearest mm).
template <class S, class A>
Key<S> metres(std::string name, A acc, std::string doc) {
  return {name, "number, 0 .. 100000 (metres)", std::move(doc),
          [acc](const core::CfgNode& n, const std::string& k, S& s) {
            const double m = n.real(k, static_cast<double>(acc(s)) / 1000.0, 0.0, 100000.0);
            acc(s) = static_cast<uint64_t>(std::llround(m * 1000.0));
          },
          [acc](const S& s) { return mm_text(acc(s)); }};
}
// A nested mapping read with its own table into acc(s) (unknown keys in it
// refused), written as a flow map. table: the nested section's table.
template <class S, class A, class T>
Key<S> map(std::string name, A acc, const KeyTable<T>& (*table)(), std::string doc,
           std::string default_doc = "see below") {
  Key<S> k{name, "map", std::move(doc),
           [acc, table](const core::CfgNode& n, const std::string& key, S& s) {
             const core::CfgNode m = n.map(key);
             read_keys(table(), m, acc(s));
             m.finish();
           },
           [acc, table](const S& s) { return emit_flow(table(), acc(s)); }, std::move(default_doc)};
  k.block = [acc, table](const S& s, const std::string& indent) { return emit_keys(table(), acc(s), indent); };
  return k;
}
// The section itself (a nested map over the same struct).
#define ROCESIM_SELF [](auto& s_) -> auto& { return s_; }

// One of the words; get/set map the section's value to and from its word.
template <class S>
Key<S> choice(std::string name, std::vector<std::string> words, std::function<std::string(const S&)> get,
              std::function<void(S&, const std::string&)> set, std::string doc) {
  std::string type;
  for (const std::string& w : words) type += (type.empty() ? "" : ", ") + ("`" + w + "`");
  return {name, type, std::move(doc),
          [words, get, set](const core::CfgNode& n, const std::string& k, S& s) { set(s, n.choice(k, get(s), words)); },
          get};
}

}  // namespace keys
}  // namespace rocesim::sim
