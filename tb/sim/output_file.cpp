#include "sim/output_file.h"

#include <cerrno>
#include <cstring>

namespace rocesim::sim {

void close_stream(std::FILE*& f, const std::string& path, int first_err, std::vector<OutputFailure>& failed) {
  if (!f) return;
  const std::string tmp = path + ".partial";
  errno = 0;
  bool ok = std::ferror(f) == 0;
  int err = first_err;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  f = nullptr;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (ok) return;
  std::remove(tmp.c_str());
  failed.push_back({path, err ? std::strerror(err) : "write error"});
}

bool open_stream(std::FILE*& f, const std::string& path, std::string& why) {
  f = std::fopen((path + ".partial").c_str(), "w");
  if (f) return true;
  why = "cannot write " + path + ": " + std::strerror(errno);
  return false;
}

}  // namespace rocesim::sim
