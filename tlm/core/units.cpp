// Exact integer parsing/formatting of rates, sizes and times (see units.h).
#include "core/units.h"

#include <cctype>
#include <cstddef>
#include <numeric>

namespace rocesim::core {
namespace {

struct Unit {
  const char* name;
  uint64_t mult;  // base units (bit/s, byte, ps) per one of this unit
};

// A misspelling we can confidently map to a unit (case-insensitive matches
// are found without a table).
struct Alias {
  const char* text;
  const char* unit;
};

struct Kind {
  const char* noun;      // "rate"
  const char* example;   // "100Gbps"
  const char* base;      // "bits/s", used in "not a whole number of ..."
  const Unit* units;     // in the order listed in messages
  size_t n_units;
  const Unit* format_order;  // tried in order by format(); first exact division wins
  size_t n_format;
  const Alias* aliases;
  size_t n_aliases;
};

constexpr uint64_t kK = 1000, kM = kK * kK, kG = kM * kK, kT = kG * kK;

constexpr Unit kRateUnits[] = {{"bps", 1}, {"Kbps", kK}, {"Mbps", kM}, {"Gbps", kG}, {"Tbps", kT}};
constexpr Unit kRateFormat[] = {{"Tbps", kT}, {"Gbps", kG}, {"Mbps", kM}, {"Kbps", kK}, {"bps", 1}};
constexpr Alias kRateAliases[] = {{"b/s", "bps"}, {"Kb/s", "Kbps"}, {"Mb/s", "Mbps"},
                                  {"Gb/s", "Gbps"}, {"Tb/s", "Tbps"}, {"K", "Kbps"},
                                  {"M", "Mbps"},    {"G", "Gbps"},    {"T", "Tbps"},
                                  {"Gb", "Gbps"},   {"Mb", "Mbps"},   {"Kb", "Kbps"}};

// TB and TiB: range messages name them (a flow's size is at most 1TiB).
constexpr Unit kSizeUnits[] = {{"B", 1},          {"KB", kK},         {"MB", kM},         {"GB", kG},
                               {"TB", kT},         {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                               {"TiB", 1ull << 40}};
// Binary units first: buffer sizes are usually powers of two.
constexpr Unit kSizeFormat[] = {{"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20},
                                {"KiB", 1ull << 10}, {"TB", kT},          {"GB", kG},
                                {"MB", kM},          {"KB", kK},          {"B", 1}};
constexpr Alias kSizeAliases[] = {{"bytes", "B"}, {"byte", "B"}, {"K", "KiB"}, {"M", "MiB"}, {"G", "GiB"},
                                  {"T", "TiB"}};

// h: the longest limits are an hour ("at most 1h").
constexpr Unit kTimeUnits[] = {{"ps", 1}, {"ns", kK}, {"us", kM}, {"ms", kG}, {"s", kT}, {"h", 3600 * kT}};
constexpr Unit kTimeFormat[] = {{"h", 3600 * kT}, {"s", kT}, {"ms", kG}, {"us", kM}, {"ns", kK}, {"ps", 1}};
constexpr Alias kTimeAliases[] = {{"\xc2\xb5s", "us"}, {"\xce\xbcs", "us"},  // micro sign, Greek mu
                                  {"sec", "s"},        {"secs", "s"},        {"usec", "us"},
                                  {"nsec", "ns"},      {"msec", "ms"},       {"psec", "ps"},
                                  {"hr", "h"},         {"hour", "h"},        {"hours", "h"}};

#define ROCESIM_N(a) (sizeof(a) / sizeof((a)[0]))
const Kind kRate{"rate", "100Gbps", "bits/s",
                 kRateUnits, ROCESIM_N(kRateUnits), kRateFormat, ROCESIM_N(kRateFormat),
                 kRateAliases, ROCESIM_N(kRateAliases)};
const Kind kSize{"size", "16MiB", "bytes",
                 kSizeUnits, ROCESIM_N(kSizeUnits), kSizeFormat, ROCESIM_N(kSizeFormat),
                 kSizeAliases, ROCESIM_N(kSizeAliases)};
const Kind kTime{"time", "2us", "picoseconds",
                 kTimeUnits, ROCESIM_N(kTimeUnits), kTimeFormat, ROCESIM_N(kTimeFormat),
                 kTimeAliases, ROCESIM_N(kTimeAliases)};
#undef ROCESIM_N

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// User text inside a message: quoted, and cut short so one bad value cannot
// flood the error line.
std::string quoted(std::string_view text) {
  constexpr size_t kMax = 60;
  std::string s(text.substr(0, kMax));
  if (text.size() > kMax) s += "...";
  return "'" + s + "'";
}

// Sets err and returns false; every message ends with the accepted units.
bool fail(const Kind& kind, std::string& err, std::string msg) {
  msg += "; accepted units: ";
  for (size_t i = 0; i < kind.n_units; ++i) {
    if (i) msg += ", ";
    msg += kind.units[i].name;
  }
  err = std::move(msg);
  return false;
}

const char* suggest_unit(const Kind& kind, std::string_view unit) {
  for (size_t i = 0; i < kind.n_units; ++i)
    if (iequal(unit, kind.units[i].name)) return kind.units[i].name;
  for (size_t i = 0; i < kind.n_aliases; ++i)
    if (iequal(unit, kind.aliases[i].text)) return kind.aliases[i].unit;
  return nullptr;
}

// Parses "DIGITS[.DIGITS][ ]UNIT" into an exact multiple of the base unit.
bool parse_quantity(const Kind& kind, std::string_view text, uint64_t& out, std::string& err) {
  const std::string generic =
      std::string("expected a ") + kind.noun + " such as " + kind.example + ", got " + quoted(text);
  if (!text.empty() && text[0] == '-')
    return fail(kind, err, std::string("negative ") + kind.noun + " " + quoted(text) + " is not allowed");

  size_t pos = 0;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  std::string_view int_part = text.substr(0, pos);
  if (int_part.empty()) return fail(kind, err, generic);
  std::string_view frac_part;
  if (pos < text.size() && text[pos] == '.') {
    size_t start = ++pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    frac_part = text.substr(start, pos - start);
    if (frac_part.empty()) return fail(kind, err, generic);
  }
  const std::string_view number = text.substr(0, pos);
  bool spaced = false;
  if (pos < text.size() && text[pos] == ' ') {
    spaced = true;
    ++pos;
  }
  const std::string_view unit_text = text.substr(pos);

  // Drop the zeros that do not change the value, so precision limits only
  // apply to significant digits.
  while (int_part.size() > 1 && int_part[0] == '0') int_part.remove_prefix(1);
  while (!frac_part.empty() && frac_part.back() == '0') frac_part.remove_suffix(1);
  const bool zero = int_part == "0" && frac_part.empty();

  if (unit_text.empty()) {
    // A bare zero needs no unit: it is the same in every unit.
    if (zero && !spaced) {
      out = 0;
      return true;
    }
    return fail(kind, err, "missing unit in " + quoted(text));
  }
  const Unit* unit = nullptr;
  for (size_t i = 0; i < kind.n_units; ++i)
    if (unit_text == kind.units[i].name) unit = &kind.units[i];
  if (!unit) {
    for (char c : unit_text)
      if (std::isspace(static_cast<unsigned char>(c)) || is_digit(c) || c == '.' || c == '-' || c == '+')
        return fail(kind, err, generic);
    std::string msg = "unknown unit " + quoted(unit_text) + " in " + quoted(text);
    if (const char* hint = suggest_unit(kind, unit_text)) msg += std::string(" (did you mean '") + hint + "'?)";
    return fail(kind, err, msg);
  }

  const std::string too_large = quoted(text) + " is too large (at most " + std::to_string(UINT64_MAX) + " " +
                                kind.base + ")";
  // Integer part, with overflow detection.
  uint64_t whole = 0;
  for (char c : int_part) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (whole > (UINT64_MAX - d) / 10) return fail(kind, err, too_large);
    whole = whole * 10 + d;
  }
  // Fraction F / 10^n times mult is whole iff (10^n / g) divides F, with
  // g = gcd(mult, 10^n); then it equals (F / (10^n/g)) * (mult/g) < mult.
  uint64_t frac_value = 0;
  if (!frac_part.empty()) {
    if (frac_part.size() > 19)  // 10^19 is the largest power of ten in 64 bits
      return fail(kind, err, quoted(text) + " has too many decimal places");
    uint64_t f = 0, pow10 = 1;
    for (char c : frac_part) {
      f = f * 10 + static_cast<uint64_t>(c - '0');
      pow10 *= 10;
    }
    const uint64_t g = std::gcd(unit->mult, pow10);
    const uint64_t denom = pow10 / g;
    if (f % denom != 0)
      return fail(kind, err, std::string(number) + unit->name + " is not a whole number of " + kind.base);
    frac_value = (f / denom) * (unit->mult / g);
  }
  if (whole > (UINT64_MAX - frac_value) / unit->mult) return fail(kind, err, too_large);
  out = whole * unit->mult + frac_value;
  return true;
}

std::string format_quantity(const Kind& kind, uint64_t value) {
  if (value == 0) return std::string("0") + kind.units[0].name;
  for (size_t i = 0; i < kind.n_format; ++i) {
    const Unit& u = kind.format_order[i];
    if (value % u.mult == 0) return std::to_string(value / u.mult) + u.name;
  }
  return std::to_string(value) + kind.units[0].name;  // unreachable: the base unit divides everything
}

}  // namespace

bool parse_rate(std::string_view text, uint64_t& bps, std::string& err) {
  return parse_quantity(kRate, text, bps, err);
}
bool parse_size(std::string_view text, uint64_t& bytes, std::string& err) {
  return parse_quantity(kSize, text, bytes, err);
}
bool parse_time(std::string_view text, uint64_t& ps, std::string& err) {
  return parse_quantity(kTime, text, ps, err);
}

std::string format_rate(uint64_t bps) { return format_quantity(kRate, bps); }
std::string format_size(uint64_t bytes) { return format_quantity(kSize, bytes); }
std::string format_time(uint64_t ps) { return format_quantity(kTime, ps); }

}  // namespace rocesim::core
