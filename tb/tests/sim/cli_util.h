// Helpers for tests that run the rocesim binary as a user would.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace clitest {

// Wall-clock bounds in these tests are calibrated on the Release build (each
// well above what it needs there). The ASan/UBSan build (make debug) runs
// several times slower, so its bounds are this many times longer: they still
// tell "refused before simulating" and "stopped at the next slice" from
// "ran to the end".
#if defined(__SANITIZE_ADDRESS__)
inline constexpr double kWallScale = 5.0;
#else
inline constexpr double kWallScale = 1.0;
#endif

struct Result {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline bool exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

inline std::string bin() {
  const char* b = std::getenv("ROCESIM_BIN");
  return b ? b : "build/bin/rocesim";
}

// The source tree: ROCESIM_SRC if set, else the one the test was built from.
inline std::string src_dir() {
  const char* s = std::getenv("ROCESIM_SRC");
#ifdef ROCESIM_SOURCE_DIR
  return s ? s : ROCESIM_SOURCE_DIR;
#else
  return s ? s : ".";
#endif
}

inline std::string temp_dir() {
  char tmpl[] = "/tmp/rocesim-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

// Runs a shell command line, capturing stdout and stderr.
inline Result sh(const std::string& cmd) {
  const std::string dir = temp_dir();
  const std::string o = dir + "/stdout", e = dir + "/stderr";
  const int st = std::system((cmd + " >" + o + " 2>" + e + " </dev/null").c_str());
  Result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  std::system(("rm -rf " + dir).c_str());
  return r;
}

inline Result rocesim(const std::string& args) { return sh(bin() + " " + args); }

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// Removes every "...wall..." member line of a summary.json (one member per line
// for top-level fields), for comparing runs.
inline std::string strip_wall(const std::string& json) {
  std::istringstream in(json);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("wall") == std::string::npos) out += line + "\n";
  return out;
}

// One of rocesim's CSV outputs as a test reads it: the header's column names
// and each row's fields (the files quote nothing). at() throws
// std::out_of_range for a column the header lacks, so a renamed column fails
// the test rather than reading another one.
struct Csv {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  bool has(const std::string& name) const { return std::find(head.begin(), head.end(), name) != head.end(); }
  size_t col(const std::string& name) const {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end()) throw std::out_of_range("no column " + name);
    return static_cast<size_t>(it - head.begin());
  }
  const std::string& at(size_t row, const std::string& name) const { return rows.at(row).at(col(name)); }
};

// "1234.560" (rocesim's ns text: three decimals, the ps digits; docs/outputs.md)
// -> 1234560 ps, exactly. Other text is a broken output: throws.
inline uint64_t ns_text_ps(const std::string& s) {
  const size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || s.size() - dot != 4 ||
      s.find_first_not_of("0123456789.") != std::string::npos || s.find('.', dot + 1) != std::string::npos)
    throw std::invalid_argument("not ns with three decimals: '" + s + "'");
  return std::stoull(s.substr(0, dot)) * 1000 + std::stoull(s.substr(dot + 1));
}

inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f;
  std::istringstream l(line);
  for (std::string c; std::getline(l, c, ',');) f.push_back(c);
  if (!line.empty() && line.back() == ',') f.emplace_back();  // a last empty field
  return f;
}

inline Csv parse_csv(const std::string& text) {
  Csv c;
  std::istringstream in(text);
  std::string line;
  if (std::getline(in, line)) c.head = csv_fields(line);
  while (std::getline(in, line)) c.rows.push_back(csv_fields(line));
  return c;
}

}  // namespace clitest
