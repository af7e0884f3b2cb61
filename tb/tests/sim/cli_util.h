// Helpers for tests that run the rocesim binary as a user would.
#pragma once

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace clitest
