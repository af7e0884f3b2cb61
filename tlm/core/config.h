// Typed reading of YAML configuration with precise error locations.
//
// A Config holds one YAML document (yaml-cpp) plus the origin of every node:
// file:line:col for nodes read from a file, the literal argument for nodes set
// with --set. Blocks never see YAML: a reader walks a CfgNode and fills plain
// structs. Every key of a mapping must be consumed by the reader; finish()
// reports the first unknown key.
//
// Origins and consumed keys are tracked by dotted path ("links.h0.rate",
// "hosts[2].rate"), not by node identity: yaml-cpp 0.7 exposes no node
// identity, and --set rebuilds the maps it edits (copy-on-write, so that a
// YAML alias shared by several keys is not changed through the others).
// Apply every --set before reading: views taken earlier see the old tree.
//
// Loading rejects duplicate keys, non-scalar (or null) mapping keys, a
// top level that is not a mapping, and a quoted string that is never closed
// or that runs past its line over lines that read as mapping keys (a missing
// quote; yaml-cpp would take the rest of the file as the string). An empty
// document is an empty mapping.
// A key with an empty value ("rate:" or "rate: ~") is present: scalar getters
// report it as a type error, map()/seq() read it as empty.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace rocesim::core {

// A bad-input error: where (file:line:col or "--set a.b=c"), the key path, and why.
// what() is one line: "FILE:LINE:COL: key 'a.b.c': reason" (or
// "--set a.b=c: key 'a.b': reason"); with an empty key path (file cannot be
// read, YAML syntax error) it is "WHERE: reason". Newlines are escaped.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string where, std::string key_path, std::string what);
  const std::string& where() const { return m_where; }
  const std::string& key_path() const { return m_key; }
  const std::string& reason() const { return m_reason; }
 private:
  std::string m_where, m_key, m_reason;
};

class Config;

// A view of one node in the tree with its dotted key path.
class CfgNode {
 public:
  CfgNode(const Config* cfg, YAML::Node node, std::string path);

  const std::string& path() const { return m_path; }
  // The node as parsed (for re-emitting a section as written, e.g. in the
  // resolved configuration). Readers must not use it to bypass validation.
  const YAML::Node& yaml() const { return m_node; }
  bool is_map() const;  // also true for the empty view map() returns for an absent key
  bool is_seq() const;
  // Whether the key is present. Does not consume it (finish() still wants it
  // read), but records the name for "did you mean" suggestions.
  bool has(const std::string& key) const;
  std::string where() const;  // origin of this node

  // Child mapping (optional: returns an empty-map view when absent).
  CfgNode map(const std::string& key) const;
  // Child sequence elements (empty when absent). Elements' paths are "key[i]".
  std::vector<CfgNode> seq(const std::string& key) const;
  // For a map node whose keys are free-form names (e.g. node names): the keys in order.
  std::vector<std::string> keys() const;
  CfgNode child(const std::string& key) const;  // throws if absent

  // Scalars. With a default: absent key -> default. Without: required (error if absent).
  // min/max bounds are inclusive; violations report the bound with units.
  uint64_t rate(const std::string& key) const;
  uint64_t rate(const std::string& key, uint64_t def, uint64_t min = 0, uint64_t max = UINT64_MAX) const;
  uint64_t size(const std::string& key) const;
  uint64_t size(const std::string& key, uint64_t def, uint64_t min = 0, uint64_t max = UINT64_MAX) const;
  uint64_t time(const std::string& key) const;
  uint64_t time(const std::string& key, uint64_t def, uint64_t min = 0, uint64_t max = UINT64_MAX) const;
  int64_t integer(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t def, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  double real(const std::string& key, double def, double min, double max) const;
  bool boolean(const std::string& key, bool def) const;
  std::string str(const std::string& key) const;
  std::string str(const std::string& key, const std::string& def) const;
  // One of the allowed words; the error lists them.
  std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) const;

  // The scalar value of this node itself (for sequence elements), same rules.
  std::string as_str() const;
  int64_t as_integer(int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;

  // Error at this node or at one of its keys.
  [[noreturn]] void fail(const std::string& why) const;
  [[noreturn]] void fail_key(const std::string& key, const std::string& why) const;
  // A required key is absent: reports an unread key of this mapping that looks
  // like a misspelling of it ("unknown key (did you mean 'size'? ...)") at that
  // key, else "missing required key".
  [[noreturn]] void missing(const std::string& key) const;

  // Throw ConfigError for the first key of this mapping that no accessor has read.
  void finish() const;

 private:
  using ParseFn = bool (*)(std::string_view, uint64_t&, std::string&);
  using FormatFn = std::string (*)(uint64_t);

  std::string key_path(const std::string& key) const;
  // Value of `key` (noted as a known name, not consumed); throws if this is not a mapping.
  std::optional<YAML::Node> find(const std::string& key) const;
  // Consumes `key` and returns its scalar text; nullopt if absent. A non-scalar
  // value fails with "expected <expected>, got ...".
  std::optional<std::string> scalar(const std::string& key, const std::string& expected) const;
  // Shared body of rate()/size()/time(); def == nullptr means required.
  uint64_t quantity(const std::string& key, const uint64_t* def, uint64_t min, uint64_t max,
                    const char* expected, ParseFn parse, FormatFn format) const;

  const Config* m_cfg;
  YAML::Node m_node;
  std::string m_path;
};

class Config {
 public:
  // Load a YAML file. Throws ConfigError (where = file, or file:line:col on a syntax error).
  static std::unique_ptr<Config> load_file(const std::string& path);
  static std::unique_ptr<Config> load_string(const std::string& text, const std::string& name);

  // Apply "a.b.c=value": creates intermediate maps; the value is parsed as a YAML
  // scalar/flow value. "hosts[1].rate=v" indexes an existing sequence. Errors
  // (no '=', empty path segment, bad or out-of-range index, descending into a
  // scalar, invalid YAML value) throw with where = "--set ARG" and leave the
  // Config unchanged. Nodes created or replaced remember ARG as their origin.
  void apply_set(const std::string& arg);

  CfgNode root() const;
  const std::string& file() const { return m_file; }

  // Origin of the value at a dotted path: "--set ARG" if it came from --set, else
  // "FILE:LINE:COL" (1-based). For an absent path, the nearest present ancestor's.
  std::string where(const std::string& path) const;
  // Origin of the key token that introduced `path` (falls back to where(path)).
  std::string key_where(const std::string& path) const;
  // Record that key `key` of the mapping at `map_path` was consumed (used by finish()).
  void mark_used(const std::string& map_path, const std::string& key) const;
  bool was_used(const std::string& map_path, const std::string& key) const;
  // Record that a reader asked for `key` (present or not): the names finish()
  // draws "did you mean" suggestions from. In query order.
  void mark_known(const std::string& map_path, const std::string& key) const;
  const std::vector<std::string>& known_keys(const std::string& map_path) const;

 private:
  // Validate a loaded or --set subtree and record the origin of each node under
  // `path`: `set_origin` ("--set ARG") for all of them, or the YAML marks if empty.
  void record(const YAML::Node& node, const std::string& path, const std::string& set_origin,
              int depth, size_t& count);
  std::string mark_where(const YAML::Mark& mark) const;

  std::string m_file;
  const std::string* m_text = nullptr;  // the document's text while load_string() records it
  YAML::Node m_root;
  std::map<std::string, std::string> m_where;      // path -> origin of the value
  std::map<std::string, std::string> m_key_where;  // path -> origin of its key token
  mutable std::map<std::string, std::set<std::string>> m_used;     // map path -> keys read
  mutable std::map<std::string, std::vector<std::string>> m_known;  // map path -> keys asked for
};

}  // namespace rocesim::core
