#include "traffic/text_input.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/config.h"

namespace rocesim::traffic::detail {

std::string read_whole_file(const std::string& path, const std::string& key_path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw core::ConfigError(path, key_path, std::string("cannot open file: ") + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get()))  // e.g. EISDIR: fopen() succeeds on a directory
    throw core::ConfigError(path, key_path, std::string("cannot read file: ") + std::strerror(errno));
  return text;
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> out;
  uint32_t number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++number;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Line l{number, {}, 1};
    size_t i = 0;
    while (i < line.size()) {
      if (line[i] == ' ' || line[i] == '\t') {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      l.fields.push_back({line.substr(i, j - i), static_cast<uint32_t>(i + 1)});
      l.end_col = static_cast<uint32_t>(j + 1);
      i = j;
    }
    if (!l.fields.empty()) out.push_back(std::move(l));
  }
  return out;
}

std::string where(const std::string& file, uint32_t line, uint32_t col) {
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

namespace {

// A decimal number split into its parts: value = digits * 10^(exp - frac).
struct Decimal {
  bool negative = false;
  bool integer = true;      // no '.' and no exponent
  std::string digits;       // mantissa digits, leading zeros removed ("" = zero)
  int64_t frac = 0;         // digits after the point
  int64_t exp = 0;          // clamped to +-1e6: beyond that only zero/overflow matter
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool scan_decimal(std::string_view t, Decimal& d) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') {
    d.negative = true;
    ++i;
  }
  size_t mantissa_digits = 0;
  for (; i < t.size() && is_digit(t[i]); ++i, ++mantissa_digits) d.digits += t[i];
  if (i < t.size() && t[i] == '.') {
    d.integer = false;
    for (++i; i < t.size() && is_digit(t[i]); ++i, ++mantissa_digits, ++d.frac) d.digits += t[i];
  }
  if (mantissa_digits == 0) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    d.integer = false;
    ++i;
    bool eneg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) eneg = t[i++] == '-';
    if (i == t.size() || !is_digit(t[i])) return false;
    for (; i < t.size() && is_digit(t[i]); ++i)
      if (d.exp < 1000000) d.exp = d.exp * 10 + (t[i] - '0');
    if (eneg) d.exp = -d.exp;
  }
  if (i != t.size()) return false;
  size_t nz = d.digits.find_first_not_of('0');
  d.digits.erase(0, nz == std::string::npos ? d.digits.size() : nz);
  return true;
}

std::string quoted(std::string_view t) { return "'" + std::string(t) + "'"; }

}  // namespace

std::string parse_nonneg_real(std::string_view t, double& v) {
  Decimal d;
  if (!scan_decimal(t, d)) return "not a number: " + quoted(t);
  if (d.negative && !d.digits.empty()) return "negative: " + quoted(t);
  if (d.digits.empty()) {
    v = 0;
    return "";
  }
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return "out of range: " + quoted(t);
  return "";
}

std::string parse_u64(std::string_view t, uint64_t& v) {
  Decimal d;
  if (!scan_decimal(t, d)) return "not a number: " + quoted(t);
  if (d.negative && !d.digits.empty()) return "negative: " + quoted(t);
  if (!d.integer) return "not an integer: " + quoted(t);
  unsigned __int128 acc = 0;
  for (char c : d.digits) {
    acc = acc * 10 + static_cast<unsigned>(c - '0');
    if (acc > UINT64_MAX) return "too large: " + quoted(t);
  }
  v = static_cast<uint64_t>(acc);
  return "";
}

std::string parse_seconds_ps(std::string_view t, uint64_t& ps) {
  Decimal d;
  if (!scan_decimal(t, d)) return "not a number: " + quoted(t);
  if (d.negative && !d.digits.empty()) return "negative time: " + quoted(t);
  const std::string too_large = "too large: " + quoted(t) + " (at most 18446744.073709551615 s)";
  if (d.digits.empty()) {
    ps = 0;
    return "";
  }
  // ps = digits * 10^(12 + exp - frac), computed on the digit string.
  const int64_t shift = 12 + d.exp - d.frac;
  const int64_t len = static_cast<int64_t>(d.digits.size());
  std::string keep;
  bool round_up = false;
  if (shift >= 0) {
    if (len + shift > 20) return too_large;
    keep = d.digits + std::string(static_cast<size_t>(shift), '0');
  } else if (-shift <= len) {
    keep = d.digits.substr(0, static_cast<size_t>(len + shift));
    round_up = d.digits[static_cast<size_t>(len + shift)] >= '5';
  }  // else: below half a ps (the first dropped digit is a leading zero): 0
  if (keep.size() > 20) return too_large;
  unsigned __int128 acc = 0;
  for (char c : keep) acc = acc * 10 + static_cast<unsigned>(c - '0');
  if (round_up) ++acc;
  if (acc > UINT64_MAX) return too_large;
  ps = static_cast<uint64_t>(acc);
  return "";
}

}  // namespace rocesim::traffic::detail
