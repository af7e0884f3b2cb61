// Resident set size of the test process, for tests that check memory is
// touched only where it is used.
#pragma once

#include <cstdio>

#include <unistd.h>

namespace testkit {

// Bytes resident now (/proc/self/statm, field 2, in pages); -1 if unreadable.
inline long resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long size = 0, res = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &res);
  std::fclose(f);
  return n == 2 ? res * sysconf(_SC_PAGESIZE) : -1;
}

}  // namespace testkit
