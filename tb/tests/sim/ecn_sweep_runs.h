// Reads regress/sweeps/ecn_sweep.sh's per-run CSV (ecn_sweep_runs.csv) for
// the ECN sweep tests: per K, the seeds' line fraction, pause frames and
// short-flow p99 slowdown, with the statistics the tests compare.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ecnsweep {

struct Seeds {
  std::vector<double> tput, pauses, p99;  // line_fraction, pause_frames_tx, slowdown_p99
};

inline double lo(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }
inline double hi(std::vector<double> v) { return *std::max_element(v.begin(), v.end()); }
// The seeds' spread: the distance between the extremes.
inline double spread(const std::vector<double>& v) { return hi(v) - lo(v); }
// Median as the sweep writes it (statistics.median: mean of the middle two for even n).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// K in bytes -> that K's seeds. Fails the test on a malformed file.
inline std::map<unsigned long, Seeds> read_runs(const std::string& path) {
  std::map<unsigned long, Seeds> by_k;
  std::ifstream f(path);
  std::string line;
  EXPECT_TRUE(std::getline(f, line)) << path;
  EXPECT_EQ(line.rfind("k_bytes,seed,throughput_gbps,line_fraction,ecn_seen,ecn_marked,mark_ratio,cnps,"
                       "pause_frames_tx,dropped,flows_completed,bulk_completed,bulk_flows,slowdown_p99,",
                       0),
            0u)
      << line;
  while (std::getline(f, line)) {
    unsigned long k = 0, seen = 0, marked = 0, cnps = 0, pauses = 0, dropped = 0, done = 0, bdone = 0, bulk = 0;
    int seed = 0;
    double gbps = 0, frac = 0, ratio = 0, p99 = 0;
    const int n = std::sscanf(line.c_str(), "%lu,%d,%lf,%lf,%lu,%lu,%lf,%lu,%lu,%lu,%lu,%lu,%lu,%lf", &k, &seed,
                              &gbps, &frac, &seen, &marked, &ratio, &cnps, &pauses, &dropped, &done, &bdone, &bulk,
                              &p99);
    EXPECT_EQ(n, 14) << line;
    EXPECT_EQ(dropped, 0u) << "lossless PG dropped packets: " << line;
    Seeds& s = by_k[k];
    s.tput.push_back(frac);
    s.pauses.push_back(double(pauses));
    s.p99.push_back(p99);
  }
  return by_k;
}

}  // namespace ecnsweep
