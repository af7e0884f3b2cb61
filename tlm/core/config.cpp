// Typed YAML configuration reading (see config.h).
//
// yaml-cpp pitfall this file avoids: Node::operator= on a Node that already
// refers to a tree node overwrites that tree node in place. Nodes are only
// ever copy-constructed or reset() here, never assigned.
#include "core/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "core/units.h"

namespace rocesim::core {
namespace {

// Guards against self-referencing aliases ("&a [*a]") and alias bombs.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = 1000000;

// Keeps what() on one line whatever the user's text contains.
std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  return out;
}

std::string compose(const std::string& where, const std::string& key, const std::string& reason) {
  if (key.empty()) return one_line(where + ": " + reason);
  return one_line(where + ": key '" + key + "': " + reason);
}

std::string quoted(const std::string& text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return "'" + text + "'";
  return "'" + text.substr(0, kMax) + "...'";
}

// "a mapping", "'abc'", ... for "got ..." in messages.
std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return quoted(n.Scalar());
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an empty value";
  }
}

// Absent ("map() of a missing key") and null ("key:" with no value) both read as empty.
bool is_empty(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}
std::string index_path(const std::string& parent, size_t i) { return parent + "[" + std::to_string(i) + "]"; }

// "a.b[2]" -> "a.b", "a.b" -> "a", "a" -> "".
std::string parent_path(const std::string& path) {
  const size_t cut = path.find_last_of(".[");
  return cut == std::string::npos ? std::string() : path.substr(0, cut);
}

// True if `path` is `prefix` or lies inside it.
bool within(const std::string& path, const std::string& prefix) {
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  if (path.size() == prefix.size()) return true;
  if (prefix.empty()) return true;
  return path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

// Optimal-string-alignment distance: an adjacent swap ("raet") costs 1.
size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// " (did you mean 'x'?)" for the closest candidate within distance 2, else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = 3;
  for (const std::string& c : candidates) {
    if (c == word) continue;
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = &c;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : std::string();
}

// Whole-string decimal integer; on failure sets the reason.
bool parse_int(const std::string& text, int64_t min, int64_t max, int64_t& out, std::string& err) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, v);
  if (res.ec == std::errc::result_out_of_range) {
    err = "integer " + quoted(text) + " is out of range";
    return false;
  }
  if (text.empty() || res.ec != std::errc() || res.ptr != end) {
    err = "expected an integer, got " + quoted(text);
    return false;
  }
  if (v < min) {
    err = "must be at least " + std::to_string(min) + " (got " + std::to_string(v) + ")";
    return false;
  }
  if (v > max) {
    err = "must be at most " + std::to_string(max) + " (got " + std::to_string(v) + ")";
    return false;
  }
  out = v;
  return true;
}

// Shortest text that reads back as the same double, in plain decimals as a
// user writes them ("100000", "0.1"), not "1e+05"; exponents only for the
// extremes, where plain decimals would be unreadable.
std::string format_real(double v) {
  char buf[64];
  const double mag = std::fabs(v);
  const bool plain = v == 0 || (mag >= 1e-6 && mag < 1e15);
  const auto res = plain ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// A line that reads as a block mapping key ("  topology:", "- kind: x"):
// optional indentation and "- ", a plain name, then ':' at the end or
// before a space.
bool looks_like_key_line(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (line.compare(i, 2, "- ") == 0) i += 2;
  while (i < line.size() && line[i] == ' ') ++i;
  const size_t start = i;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' ||
                             line[i] == '-' || line[i] == '.'))
    ++i;
  if (i == start || i >= line.size() || line[i] != ':') return false;
  return i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\r';
}

// yaml-cpp 0.7 ends a quoted scalar at the end of the stream without
// complaint, and a quoted scalar may span lines, so one missing quote
// silently turns the rest of the file into a string (`name: "incast`
// followed by the topology ran the defaults). Refuse a quoted scalar that
// is never closed, or that runs past its line over lines that read as
// mapping keys. `pos` is the offset of the opening quote.
std::string unclosed_quote(const std::string& text, size_t pos) {
  if (pos >= text.size() || (text[pos] != '"' && text[pos] != '\'')) return {};
  const char q = text[pos];
  size_t i = pos + 1, close = std::string::npos;
  while (i < text.size()) {
    if (q == '"' && text[i] == '\\') {
      i += 2;
    } else if (q == '\'' && text[i] == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
      i += 2;  // '' is a quote inside single quotes
    } else if (text[i] == q) {
      close = i;
      break;
    } else {
      ++i;
    }
  }
  const std::string what = std::string(q == '"' ? "double" : "single") + "-quoted string";
  if (close == std::string::npos) return what + " is never closed (missing " + std::string(1, q) + "?)";
  size_t line_start = text.find('\n', pos);
  if (line_start == std::string::npos || line_start > close) return {};  // closed on its own line
  size_t lines = 0;
  while (line_start != std::string::npos && line_start < close) {
    ++lines;
    const size_t b = line_start + 1;
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    const std::string_view line(text.data() + b, std::min(e, close) - b);
    if (looks_like_key_line(line)) {
      std::string shown(line.substr(line.find_first_not_of(" \t")));
      if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
      return what + " runs past its line over '" + shown + "' (" + std::to_string(lines) +
             " line(s) later): missing closing " + std::string(1, q) + "?";
    }
    line_start = e < close ? e : std::string::npos;
  }
  return {};
}

// The first quoted value in `text` that unclosed_quote() refuses, found
// without a parser (for when the parser failed): a quote that starts a value
// (at a line's start or after ':', '-', '[', '{', ','), outside comments.
// Sets the 1-based line and column of the quote.
std::string first_runaway_quote(const std::string& text, size_t& line, size_t& col) {
  size_t ln = 1, line_start = 0;
  char prev = '\n';  // last non-blank character on this line
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++ln;
      line_start = i + 1;
      prev = '\n';
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '#' && (i == line_start || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // comment
      continue;
    }
    if ((c == '"' || c == '\'') && std::strchr("\n:-[{,", prev)) {
      const std::string why = unclosed_quote(text, i);
      if (!why.empty()) {
        line = ln;
        col = i - line_start + 1;
        return why;
      }
      // Skip to its closing quote (on this line, or a legitimate multi-line string).
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) {
        if (c == '"' && text[j] == '\\') ++j;
        else if (c == '\'' && text[j] == '\'' && j + 1 < text.size() && text[j + 1] == '\'') ++j;
        ++j;
      }
      for (size_t k = i; k < j && k < text.size(); ++k)
        if (text[k] == '\n') {
          ++ln;
          line_start = k + 1;
        }
      i = j;
      prev = c;
      continue;
    }
    prev = c;
  }
  return {};
}

// A --set path segment: a mapping key or a sequence index.
struct Segment {
  std::string key;
  bool is_index = false;
  size_t index = 0;
};

// Error thrower for one --set argument.
struct SetError {
  std::string origin;  // "--set ARG"
  std::string path;    // the KEY part
  [[noreturn]] void operator()(const std::string& why) const { throw ConfigError(origin, path, why); }
};

// "hosts[1].rate" -> {hosts, [1], rate}.
std::vector<Segment> parse_set_path(const std::string& text, const SetError& fail) {
  std::vector<Segment> segs;
  size_t i = 0;
  const size_t n = text.size();
  for (;;) {
    const size_t start = i;
    while (i < n && text[i] != '.' && text[i] != '[' && text[i] != ']') ++i;
    if (i == start) fail("empty key segment in " + quoted(text));
    segs.push_back({text.substr(start, i - start)});
    while (i < n && text[i] == '[') {
      const size_t close = text.find(']', i);
      if (close == std::string::npos) fail("missing ']' in " + quoted(text));
      const std::string digits = text.substr(i + 1, close - i - 1);
      const bool numeric = !digits.empty() && digits.size() <= 9 &&
                           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!numeric) fail("bad sequence index '[" + digits + "]' in " + quoted(text));
      Segment s;
      s.is_index = true;
      s.index = std::stoul(digits);
      segs.push_back(s);
      i = close + 1;
    }
    if (i == n) break;
    if (text[i] != '.') fail(std::string("unexpected '") + text[i] + "' in " + quoted(text));
    ++i;  // an empty segment after the dot is caught at the top of the loop
  }
  return segs;
}

// Copy of `node` (at `path`) with `value` placed at segs[i..]. Only the maps
// and sequences on the way are copied; untouched children are shared. Paths of
// maps created because they were missing are appended to `created`.
YAML::Node rebuild(const YAML::Node& node, const std::string& path, const std::vector<Segment>& segs, size_t i,
                   const YAML::Node& value, std::vector<std::string>& created, const SetError& fail) {
  const Segment& seg = segs[i];
  const bool last = i + 1 == segs.size();
  if (seg.is_index) {
    if (!node.IsSequence())
      fail("cannot index " + quoted(path) + ": it is " + (is_empty(node) ? "not set" : describe(node)) +
           ", not a sequence");
    if (seg.index >= node.size())
      fail("index " + std::to_string(seg.index) + " is out of range: " + quoted(path) + " has " +
           std::to_string(node.size()) + (node.size() == 1 ? " element" : " elements"));
    const std::string elem_path = index_path(path, seg.index);
    YAML::Node out(YAML::NodeType::Sequence);
    for (size_t j = 0; j < node.size(); ++j) {
      if (j != seg.index)
        out.push_back(node[j]);
      else
        out.push_back(last ? value : rebuild(node[j], elem_path, segs, i + 1, value, created, fail));
    }
    return out;
  }

  if (!node.IsMap() && !is_empty(node)) {
    std::string why = "cannot set key '" + seg.key + "' inside " + quoted(path) + ": it is " + describe(node);
    if (node.IsSequence()) why += "; use an index such as " + path + "[0]";
    fail(why);
  }
  const std::string key_path = child_path(path, seg.key);
  YAML::Node out(YAML::NodeType::Map);
  bool found = false;
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.Scalar() != seg.key) {
        out.force_insert(it->first, it->second);
        continue;
      }
      found = true;
      out.force_insert(it->first, last ? value : rebuild(it->second, key_path, segs, i + 1, value, created, fail));
    }
  }
  if (!found) {
    if (!last) created.push_back(key_path);
    out.force_insert(YAML::Node(seg.key),
                     last ? value : rebuild(YAML::Node(), key_path, segs, i + 1, value, created, fail));
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------- ConfigError

ConfigError::ConfigError(std::string where, std::string key_path, std::string what)
    : std::runtime_error(compose(where, key_path, what)),
      m_where(std::move(where)),
      m_key(std::move(key_path)),
      m_reason(std::move(what)) {}

// ---------------------------------------------------------------- Config

namespace {

// Sees only where each document starts.
struct DocumentStarts : YAML::EventHandler {
  YAML::Mark start;
  size_t previous = 0;
  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::unique_ptr<Config> Config::load_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw ConfigError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get()))  // e.g. EISDIR: fopen() succeeds on a directory
    throw ConfigError(path, "", std::string("cannot read file: ") + std::strerror(errno));
  return load_string(text, path);
}

std::unique_ptr<Config> Config::load_string(const std::string& text, const std::string& name) {
  auto cfg = std::make_unique<Config>();
  cfg->m_file = name;
  std::vector<YAML::Node> docs;
  try {
    // yaml-cpp 0.7's LoadAll() loops for ever, growing memory, on a token its
    // document parser cannot place (a ',' outside a flow collection, as in
    // ",a: 1"): each call reports a new empty document at the same position
    // (fixed upstream after 0.7, yaml-cpp pull 1319). Walk the documents
    // first and refuse one that starts where the previous one did.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts h;
    for (size_t n = 0; parser.HandleNextDocument(h); ++n) {
      const size_t pos = static_cast<size_t>(h.start.pos);
      if (n > 0 && pos == h.previous) {
        const std::string c = pos < text.size() ? std::string(1, text[pos]) : std::string();
        throw ConfigError(cfg->mark_where(h.start), "", "YAML syntax error: unexpected '" + c + "'");
      }
      h.previous = pos;
    }
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    // A missing quote closed by a later one ends in a syntax error far from
    // the cause: point at the quote instead.
    size_t line = 0, col = 0;
    const std::string why = first_runaway_quote(text, line, col);
    if (!why.empty())
      throw ConfigError(name + ":" + std::to_string(line) + ":" + std::to_string(col), "",
                        why + " (YAML syntax error at " + cfg->mark_where(e.mark) + ": " + e.msg + ")");
    throw ConfigError(cfg->mark_where(e.mark), "", "YAML syntax error: " + e.msg);
  }
  if (docs.size() > 1)  // a second document would otherwise be silently ignored
    throw ConfigError(cfg->mark_where(docs[1].Mark()), "", "only one YAML document is allowed");
  YAML::Node root = docs.empty() ? YAML::Node(YAML::NodeType::Map) : docs[0];
  if (root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap())
    throw ConfigError(cfg->mark_where(root.Mark()), "", "the top level must be a mapping, got " + describe(root));
  size_t count = 0;
  cfg->m_text = &text;  // for the quote check; only while loading
  cfg->record(root, "", "", 0, count);
  cfg->m_text = nullptr;
  cfg->m_root.reset(root);
  return cfg;
}

std::string Config::mark_where(const YAML::Mark& mark) const {
  if (mark.is_null()) return m_file;
  return m_file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void Config::record(const YAML::Node& node, const std::string& path, const std::string& set_origin, int depth,
                    size_t& count) {
  std::string here;
  if (!set_origin.empty()) {
    here = set_origin;
  } else if (node.IsNull() && m_key_where.count(path)) {
    here = m_key_where[path];  // yaml-cpp marks an empty value at the next token: use its key
  } else {
    here = mark_where(node.Mark());
  }
  if (++count > kMaxNodes || depth > kMaxDepth)
    throw ConfigError(here, path, "document is nested too deeply or too large (recursive alias?)");
  m_where[path] = here;
  if (m_text && node.IsScalar() && !node.Mark().is_null()) {
    const std::string why = unclosed_quote(*m_text, static_cast<size_t>(node.Mark().pos));
    if (!why.empty()) throw ConfigError(here, path, why);
  }

  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) record(node[i], index_path(path, i), set_origin, depth + 1, count);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, std::string> seen;  // key -> its origin, to report duplicates
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key_origin = set_origin.empty() ? mark_where(it->first.Mark()) : set_origin;
    if (!it->first.IsScalar())
      throw ConfigError(key_origin, path, "mapping keys must be plain names, got " + describe(it->first));
    const std::string& name = it->first.Scalar();
    const std::string sub = child_path(path, name);
    const auto [prev, fresh] = seen.emplace(name, key_origin);
    if (!fresh) {
      std::string why = "duplicate key";
      if (prev->second != key_origin) why += " (first defined at " + prev->second + ")";
      throw ConfigError(key_origin, sub, why);
    }
    m_key_where[sub] = key_origin;
    record(it->second, sub, set_origin, depth + 1, count);
  }
}

void Config::apply_set(const std::string& arg) {
  const size_t eq = arg.find('=');
  const std::string key_text = eq == std::string::npos ? arg : arg.substr(0, eq);
  const SetError fail{"--set " + arg, key_text};
  if (eq == std::string::npos) fail("expected KEY=VALUE");
  const std::vector<Segment> segs = parse_set_path(key_text, fail);

  YAML::Node value;
  try {
    value.reset(YAML::Load(arg.substr(eq + 1)));
  } catch (const YAML::Exception& e) {
    fail("invalid YAML value: " + e.msg);
  }
  // Canonical path ("hosts[1].rate"), as CfgNode spells it.
  std::string path;
  for (const Segment& s : segs) path = s.is_index ? index_path(path, s.index) : child_path(path, s.key);

  // Validate the value and build the new tree before changing any state, so a
  // failed --set leaves the Config as it was.
  Config scratch;
  scratch.m_file = m_file;
  size_t count = 0;
  scratch.record(value, path, fail.origin, static_cast<int>(segs.size()), count);
  std::vector<std::string> created;
  YAML::Node root = rebuild(m_root, "", segs, 0, value, created, fail);

  // Forget the origins of whatever was replaced, then adopt the new ones.
  for (auto* table : {&m_where, &m_key_where}) {
    for (auto it = table->lower_bound(path); it != table->end() && it->first.compare(0, path.size(), path) == 0;) {
      if (within(it->first, path))
        it = table->erase(it);
      else
        ++it;
    }
  }
  for (const std::string& p : created) m_where[p] = m_key_where[p] = fail.origin;
  for (auto& [p, w] : scratch.m_where) m_where[p] = w;
  for (auto& [p, w] : scratch.m_key_where) m_key_where[p] = w;
  m_root.reset(root);
}

CfgNode Config::root() const { return CfgNode(this, m_root, ""); }

std::string Config::where(const std::string& path) const {
  // An absent node reports its nearest present ancestor, e.g. the mapping a
  // required key is missing from.
  std::string p = path;
  for (;;) {
    const auto it = m_where.find(p);
    if (it != m_where.end()) return it->second;
    if (p.empty()) return m_file;
    p = parent_path(p);
  }
}

std::string Config::key_where(const std::string& path) const {
  const auto it = m_key_where.find(path);
  return it != m_key_where.end() ? it->second : where(path);
}

void Config::mark_used(const std::string& map_path, const std::string& key) const { m_used[map_path].insert(key); }

bool Config::was_used(const std::string& map_path, const std::string& key) const {
  const auto it = m_used.find(map_path);
  return it != m_used.end() && it->second.count(key) != 0;
}

void Config::mark_known(const std::string& map_path, const std::string& key) const {
  std::vector<std::string>& keys = m_known[map_path];
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

const std::vector<std::string>& Config::known_keys(const std::string& map_path) const {
  static const std::vector<std::string> kNone;
  const auto it = m_known.find(map_path);
  return it != m_known.end() ? it->second : kNone;
}

// ---------------------------------------------------------------- CfgNode

CfgNode::CfgNode(const Config* cfg, YAML::Node node, std::string path)
    : m_cfg(cfg), m_node(std::move(node)), m_path(std::move(path)) {}

bool CfgNode::is_map() const { return m_node.IsMap() || is_empty(m_node); }
bool CfgNode::is_seq() const { return m_node.IsSequence(); }
std::string CfgNode::where() const { return m_cfg->where(m_path); }
std::string CfgNode::key_path(const std::string& key) const { return child_path(m_path, key); }

std::optional<YAML::Node> CfgNode::find(const std::string& key) const {
  if (!is_map()) fail("expected a mapping, got " + describe(m_node));
  m_cfg->mark_known(m_path, key);
  if (!m_node.IsMap()) return std::nullopt;
  for (auto it = m_node.begin(); it != m_node.end(); ++it)
    if (it->first.Scalar() == key) return YAML::Node(it->second);
  return std::nullopt;
}

bool CfgNode::has(const std::string& key) const {
  if (!is_map()) return false;
  return find(key).has_value();
}

std::optional<std::string> CfgNode::scalar(const std::string& key, const std::string& expected) const {
  const std::optional<YAML::Node> v = find(key);
  if (!v) return std::nullopt;
  m_cfg->mark_used(m_path, key);
  if (!v->IsScalar()) fail_key(key, "expected " + expected + ", got " + describe(*v));
  return v->Scalar();
}

CfgNode CfgNode::map(const std::string& key) const {
  const std::optional<YAML::Node> v = find(key);
  if (!v) return CfgNode(m_cfg, YAML::Node(), key_path(key));
  m_cfg->mark_used(m_path, key);
  if (!v->IsMap() && !v->IsNull()) fail_key(key, "expected a mapping, got " + describe(*v));
  return CfgNode(m_cfg, v->IsNull() ? YAML::Node() : *v, key_path(key));
}

std::vector<CfgNode> CfgNode::seq(const std::string& key) const {
  const std::optional<YAML::Node> v = find(key);
  std::vector<CfgNode> out;
  if (!v) return out;
  m_cfg->mark_used(m_path, key);
  if (v->IsNull()) return out;
  if (!v->IsSequence()) fail_key(key, "expected a sequence, got " + describe(*v));
  const std::string base = key_path(key);
  for (size_t i = 0; i < v->size(); ++i) out.emplace_back(m_cfg, (*v)[i], index_path(base, i));
  return out;
}

std::vector<std::string> CfgNode::keys() const {
  if (!is_map()) fail("expected a mapping, got " + describe(m_node));
  std::vector<std::string> out;
  if (m_node.IsMap())
    for (auto it = m_node.begin(); it != m_node.end(); ++it) out.push_back(it->first.Scalar());
  return out;
}

CfgNode CfgNode::child(const std::string& key) const {
  const std::optional<YAML::Node> v = find(key);
  if (!v) missing(key);
  m_cfg->mark_used(m_path, key);
  return CfgNode(m_cfg, *v, key_path(key));
}

uint64_t CfgNode::quantity(const std::string& key, const uint64_t* def, uint64_t min, uint64_t max,
                           const char* expected, ParseFn parse, FormatFn format) const {
  const std::optional<std::string> text = scalar(key, expected);
  if (!text) {
    if (!def) missing(key);
    return *def;
  }
  uint64_t v = 0;
  std::string err;
  if (!parse(*text, v, err)) fail_key(key, err);
  // The bound in canonical units (every unit it names is accepted), the value as written.
  if (v < min) fail_key(key, "must be at least " + format(min) + " (got " + *text + ")");
  if (v > max) fail_key(key, "must be at most " + format(max) + " (got " + *text + ")");
  return v;
}

uint64_t CfgNode::rate(const std::string& key) const {
  return quantity(key, nullptr, 0, UINT64_MAX, "a rate such as 100Gbps", parse_rate, format_rate);
}
uint64_t CfgNode::rate(const std::string& key, uint64_t def, uint64_t min, uint64_t max) const {
  return quantity(key, &def, min, max, "a rate such as 100Gbps", parse_rate, format_rate);
}
uint64_t CfgNode::size(const std::string& key) const {
  return quantity(key, nullptr, 0, UINT64_MAX, "a size such as 16MiB", parse_size, format_size);
}
uint64_t CfgNode::size(const std::string& key, uint64_t def, uint64_t min, uint64_t max) const {
  return quantity(key, &def, min, max, "a size such as 16MiB", parse_size, format_size);
}
uint64_t CfgNode::time(const std::string& key) const {
  return quantity(key, nullptr, 0, UINT64_MAX, "a time such as 2us", parse_time, format_time);
}
uint64_t CfgNode::time(const std::string& key, uint64_t def, uint64_t min, uint64_t max) const {
  return quantity(key, &def, min, max, "a time such as 2us", parse_time, format_time);
}

int64_t CfgNode::integer(const std::string& key) const {
  const std::optional<std::string> text = scalar(key, "an integer");
  if (!text) missing(key);
  int64_t v = 0;
  std::string err;
  if (!parse_int(*text, INT64_MIN, INT64_MAX, v, err)) fail_key(key, err);
  return v;
}

int64_t CfgNode::integer(const std::string& key, int64_t def, int64_t min, int64_t max) const {
  const std::optional<std::string> text = scalar(key, "an integer");
  if (!text) return def;
  int64_t v = 0;
  std::string err;
  if (!parse_int(*text, min, max, v, err)) fail_key(key, err);
  return v;
}

double CfgNode::real(const std::string& key, double def, double min, double max) const {
  const std::optional<std::string> text = scalar(key, "a number");
  if (!text) return def;
  double v = 0;
  const char* end = text->data() + text->size();
  const auto res = std::from_chars(text->data(), end, v);
  // from_chars also reads "inf"/"nan"; a configuration has no use for them.
  if (text->empty() || res.ec != std::errc() || res.ptr != end || !std::isfinite(v))
    fail_key(key, "expected a number, got " + quoted(*text));
  if (v < min) fail_key(key, "must be at least " + format_real(min) + " (got " + *text + ")");
  if (v > max) fail_key(key, "must be at most " + format_real(max) + " (got " + *text + ")");
  return v;
}

bool CfgNode::boolean(const std::string& key, bool def) const {
  const std::optional<std::string> text = scalar(key, "true or false");
  if (!text) return def;
  if (*text == "true") return true;
  if (*text == "false") return false;
  fail_key(key, "expected true or false, got " + quoted(*text));
}

std::string CfgNode::str(const std::string& key) const {
  std::optional<std::string> text = scalar(key, "a string");
  if (!text) missing(key);
  return *text;
}

std::string CfgNode::str(const std::string& key, const std::string& def) const {
  std::optional<std::string> text = scalar(key, "a string");
  return text ? *text : def;
}

std::string CfgNode::choice(const std::string& key, const std::string& def,
                            const std::vector<std::string>& allowed) const {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
  std::optional<std::string> text = scalar(key, "one of " + list);
  if (!text) return def;
  if (std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    fail_key(key, "expected one of " + list + ", got " + quoted(*text) + suggestion(*text, allowed));
  return *text;
}

std::string CfgNode::as_str() const {
  if (!m_node.IsScalar()) fail("expected a string, got " + describe(m_node));
  return m_node.Scalar();
}

int64_t CfgNode::as_integer(int64_t min, int64_t max) const {
  if (!m_node.IsScalar()) fail("expected an integer, got " + describe(m_node));
  int64_t v = 0;
  std::string err;
  if (!parse_int(m_node.Scalar(), min, max, v, err)) fail(err);
  return v;
}

void CfgNode::missing(const std::string& key) const {
  // A required key is more often misspelt than forgotten ("sz: 4KiB" for
  // "size"): name the unread key of this mapping that looks like it, where
  // it is. Only keys no reader has asked for count, and only close ones
  // with the same first letter, so that a valid key read later ("dst" when
  // "src" is missing) is not taken for a misspelling.
  if (m_node.IsMap()) {
    const std::vector<std::string>& known = m_cfg->known_keys(m_path);
    for (auto it = m_node.begin(); it != m_node.end(); ++it) {
      const std::string& name = it->first.Scalar();
      if (name.empty() || m_cfg->was_used(m_path, name)) continue;
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      const size_t d = edit_distance(name, key);
      const bool same_start = std::tolower(static_cast<unsigned char>(name[0])) ==
                              std::tolower(static_cast<unsigned char>(key[0]));
      if (d == 0 || d > 2 || (!same_start && d > 1)) continue;
      const std::string path = key_path(name);
      throw ConfigError(m_cfg->key_where(path), path,
                        "unknown key (did you mean '" + key + "'? '" + key + "' is required)");
    }
  }
  fail_key(key, "missing required key");
}

void CfgNode::fail(const std::string& why) const { throw ConfigError(where(), m_path, why); }

void CfgNode::fail_key(const std::string& key, const std::string& why) const {
  // where() of an absent key falls back to this mapping's own location.
  const std::string path = key_path(key);
  throw ConfigError(m_cfg->where(path), path, why);
}

void CfgNode::finish() const {
  if (!m_node.IsMap()) return;
  for (auto it = m_node.begin(); it != m_node.end(); ++it) {
    const std::string& key = it->first.Scalar();
    if (m_cfg->was_used(m_path, key)) continue;
    const std::string path = key_path(key);
    throw ConfigError(m_cfg->key_where(path), path, "unknown key" + suggestion(key, m_cfg->known_keys(m_path)));
  }
}

}  // namespace rocesim::core
