// Flow-size CDFs: built-ins, validation, file reading, mean and sampling.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/config.h"
#include "traffic/text_input.h"
#include "traffic/traffic.h"

namespace rocesim::traffic {

namespace {

// Sizes above 2^53 would not be whole numbers of bytes in a double.
constexpr double kMaxBytes = 9007199254740992.0;

std::string num(double v) {
  char buf[512];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::to_string(v);
}

// Which field of a point is wrong, and why ("" = fine). Shared by the file
// reader (which reports the field's column) and from_points().
struct PointError {
  bool on_percent = false;
  std::string reason;
};

PointError check_point(const Cdf::Point* prev, const Cdf::Point& p) {
  if (!(p.bytes >= 0)) return {false, "bytes: negative: " + num(p.bytes)};
  if (p.bytes > kMaxBytes) return {false, "bytes: above 2^53: " + num(p.bytes)};
  if (!(p.percent >= 0 && p.percent <= 100))
    return {true, "cumulative percent must be within 0..100, got " + num(p.percent)};
  if (prev && !(p.bytes > prev->bytes))
    return {false, "bytes not increasing: " + num(p.bytes) + " after " + num(prev->bytes)};
  if (prev && p.percent < prev->percent)
    return {true, "cumulative percent decreasing: " + num(p.percent) + " after " + num(prev->percent)};
  return {};
}

std::string last_not_100(double percent) {
  return "last point's cumulative percent is " + num(percent) + ", must be 100";
}

}  // namespace

Cdf Cdf::from_points(std::vector<Point> points, std::string name) {
  auto bad = [&](size_t i, const std::string& why) {
    throw std::invalid_argument("cdf " + name + ": point " + std::to_string(i) + ": " + why);
  };
  if (points.empty()) throw std::invalid_argument("cdf " + name + ": no points");
  for (size_t i = 0; i < points.size(); ++i) {
    PointError e = check_point(i ? &points[i - 1] : nullptr, points[i]);
    if (!e.reason.empty()) bad(i, e.reason);
  }
  if (points.back().percent != 100) bad(points.size() - 1, last_not_100(points.back().percent));
  Cdf c;
  c.m_points = std::move(points);
  c.m_name = std::move(name);
  return c;
}

// WebSearch (DCTCP, Alizadeh et al. 2010) and FB_Hadoop (Roy et al. 2015),
// the points HPCC's evaluation uses (REFERENCE.md).
const Cdf& Cdf::websearch() {
  static const Cdf c = from_points({{0, 0}, {10000, 15}, {20000, 20}, {30000, 30}, {50000, 40},
                                    {80000, 53}, {200000, 60}, {1000000, 70}, {2000000, 80},
                                    {5000000, 90}, {10000000, 97}, {30000000, 100}},
                                   "websearch");
  return c;
}

const Cdf& Cdf::fb_hadoop() {
  static const Cdf c = from_points({{0, 0}, {100, 1}, {200, 2}, {300, 5}, {350, 15}, {400, 20},
                                    {500, 30}, {600, 40}, {700, 50}, {1000, 60}, {2000, 67},
                                    {7000, 70}, {30000, 72}, {50000, 82}, {80000, 87},
                                    {120000, 90}, {300000, 95}, {1000000, 97.5}, {2000000, 99},
                                    {10000000, 100}},
                                   "fb_hadoop");
  return c;
}

std::optional<Cdf> Cdf::builtin(std::string_view name) {
  if (name == "websearch") return websearch();
  if (name == "fb_hadoop") return fb_hadoop();
  return std::nullopt;
}

const char* Cdf::builtin_names() { return "websearch, fb_hadoop"; }

double Cdf::mean() const {
  if (m_points.empty()) throw std::logic_error("Cdf::mean on an empty CDF");
  // The atom at x_0, then each segment: uniform, so its midpoint times its mass.
  double s = m_points[0].bytes * m_points[0].percent;
  for (size_t i = 1; i < m_points.size(); ++i)
    s += (m_points[i - 1].bytes + m_points[i].bytes) / 2 * (m_points[i].percent - m_points[i - 1].percent);
  return s / 100;
}

double Cdf::quantile(double u) const {
  if (m_points.empty()) throw std::logic_error("Cdf::quantile on an empty CDF");
  const double y = u * 100;
  // First point with p_i > y: segment (i-1, i) holds y (p_{i-1} <= y < p_i).
  auto it = std::upper_bound(m_points.begin(), m_points.end(), y,
                             [](double v, const Point& p) { return v < p.percent; });
  if (it == m_points.begin()) return m_points.front().bytes;  // the atom at x_0
  if (it == m_points.end()) return m_points.back().bytes;     // y >= 100: u outside [0, 1)
  const Point& a = *(it - 1);
  const Point& b = *it;
  return a.bytes + (b.bytes - a.bytes) * (y - a.percent) / (b.percent - a.percent);
}

uint64_t Cdf::sample(core::Rng& rng) const {
  const double x = std::ceil(quantile(rng.uniform()));
  return x < 1 ? 1 : static_cast<uint64_t>(x);
}

Cdf parse_cdf(std::string_view text, const std::string& name, const std::string& key_path) {
  using detail::where;
  std::vector<Cdf::Point> pts;
  const std::vector<detail::Line> lines = detail::split_lines(text);
  const char* format = " (line format: bytes cumulative_percent)";
  uint32_t last_percent_line = 0, last_percent_col = 0;
  for (const detail::Line& l : lines) {
    if (l.fields.size() < 2)
      throw core::ConfigError(where(name, l.number, l.end_col), key_path,
                              std::string("missing field 'cumulative_percent'") + format);
    if (l.fields.size() > 2)
      throw core::ConfigError(where(name, l.number, l.fields[2].col), key_path,
                              "extra field '" + std::string(l.fields[2].text) + "'" + format);
    Cdf::Point p{};
    if (std::string e = detail::parse_nonneg_real(l.fields[0].text, p.bytes); !e.empty())
      throw core::ConfigError(where(name, l.number, l.fields[0].col), key_path, "bytes: " + e);
    if (std::string e = detail::parse_nonneg_real(l.fields[1].text, p.percent); !e.empty())
      throw core::ConfigError(where(name, l.number, l.fields[1].col), key_path, "cumulative percent: " + e);
    PointError e = check_point(pts.empty() ? nullptr : &pts.back(), p);
    if (!e.reason.empty())
      throw core::ConfigError(where(name, l.number, l.fields[e.on_percent ? 1 : 0].col), key_path, e.reason);
    pts.push_back(p);
    last_percent_line = l.number;
    last_percent_col = l.fields[1].col;
  }
  if (pts.empty())
    throw core::ConfigError(where(name, 1, 1), key_path,
                            std::string("no points: expected lines 'bytes cumulative_percent'"));
  if (pts.back().percent != 100)
    throw core::ConfigError(where(name, last_percent_line, last_percent_col), key_path,
                            last_not_100(pts.back().percent));
  return Cdf::from_points(std::move(pts), name);
}

Cdf read_cdf_file(const std::string& path, const std::string& key_path) {
  return parse_cdf(detail::read_whole_file(path, key_path), path, key_path);
}

}  // namespace rocesim::traffic
