// Traffic generators: plain C++17 (no SystemC). Each generator is a pure
// function of its parameters, the hosts (count and link rates) and one RNG
// stream (core::Rng(seed, name)); it returns a deterministic list of flows.
// The simulator turns the list into RDMA messages; this library never sees it.
//
// Sources:
//  - HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019)
//    and its traffic generator (traffic_gen/ of its public artifact): CDF
//    files of "bytes cumulative_percent" pairs, linear interpolation between
//    points, Poisson arrivals at a load of the host links, and the flow file
//    "src dst pg dport size start_s" its simulator replays.
//  - WebSearch: the flow-size distribution of DCTCP (Alizadeh et al.,
//    "Data Center TCP (DCTCP)", SIGCOMM 2010).
//  - FB_Hadoop: the Hadoop cluster of Roy et al., "Inside the Social Network's
//    (Datacenter) Network", SIGCOMM 2015.
//  Both CDFs as HPCC's evaluation uses them (shared/design/REFERENCE.md).
//
// Units: bytes, picoseconds, bits per second (as core/units.h).
// Bad parameters throw std::invalid_argument whose message names the
// parameter ("incast.receiver = 16: ..."); bad file input throws
// core::ConfigError with where = "FILE:LINE:COL" (1-based; columns count
// bytes) and key_path = the config key that named the file.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rng.h"

namespace rocesim::traffic {

// ---------------------------------------------------------------- flows

struct Flow {
  uint32_t src = 0, dst = 0;          // host indices
  uint64_t size_bytes = 0;            // message payload, >= 1
  uint64_t start_ps = 0;              // start time; with `after`, the earliest start
  uint8_t pcp = 3, dscp = 26;         // RoCE on priority 3 (seed 000), DSCP 26
  std::string tag;                    // generator name, for reports
  // Indices (in the final list) of flows that must complete before this one
  // may start. Generators return indices into their own list; append() shifts them.
  std::vector<uint32_t> after;
  uint16_t dport = 100;               // HPCC flow file's dport (100: HPCC's traffic_gen); reports only
};
bool operator==(const Flow& a, const Flow& b);
inline bool operator!=(const Flow& a, const Flow& b) { return !(a == b); }
std::ostream& operator<<(std::ostream& os, const Flow& f);  // one line, for test messages

// The hosts a generator may use: h0 .. h{count-1} and their link rates.
struct Hosts {
  std::vector<uint64_t> rate_bps;     // link rate of host i (bits/s); size() = number of hosts
  Hosts() = default;
  explicit Hosts(std::vector<uint64_t> rates) : rate_bps(std::move(rates)) {}
  Hosts(uint32_t n, uint64_t bps) : rate_bps(n, bps) {}
  uint32_t count() const { return static_cast<uint32_t>(rate_bps.size()); }
};

// Appends `more` to `all`, shifting the `after` indices of the appended flows
// by all.size(), so that lists from several generators combine into one.
void append(std::vector<Flow>& all, std::vector<Flow> more);
// Stable sort by start_ps; `after` indices are remapped to the new positions.
void sort_by_start(std::vector<Flow>& flows);
// Throws std::invalid_argument naming the first bad flow ("flow 12: ..."):
// host out of range, src == dst, size 0, pcp > 7, dscp > 63, an `after` index
// out of range or to itself, or a dependency cycle.
void check_flows(const std::vector<Flow>& flows, uint32_t num_hosts);

// ---------------------------------------------------------------- CDFs

// A flow-size distribution given as points (bytes x_i, cumulative percent p_i)
// with x strictly increasing, p non-decreasing in [0, 100] and the last p = 100.
// Between points the CDF is linear, as in HPCC's generator, i.e. sizes are
// uniform within each segment. A first point with p_0 > 0 is an atom:
// P(size = x_0) = p_0 / 100 (so "1000 100" alone is a fixed size of 1000 B).
class Cdf {
 public:
  struct Point {
    double bytes;
    double percent;
  };
  Cdf() = default;  // empty: not usable until assigned
  // Validates the points; throws std::invalid_argument ("cdf NAME: point 3: ...").
  static Cdf from_points(std::vector<Point> points, std::string name = "cdf");
  // Built-ins (REFERENCE.md, "Workloads and metrics").
  static const Cdf& websearch();
  static const Cdf& fb_hadoop();
  // "websearch" or "fb_hadoop"; nullopt for any other name.
  static std::optional<Cdf> builtin(std::string_view name);
  // The names builtin() knows, for messages: "websearch, fb_hadoop".
  static const char* builtin_names();

  const std::vector<Point>& points() const { return m_points; }
  const std::string& name() const { return m_name; }
  bool empty() const { return m_points.empty(); }

  // Mean of the piecewise-linear distribution, in bytes:
  //   x_0 p_0/100 + sum_i (x_{i-1} + x_i)/2 * (p_i - p_{i-1})/100
  // (each segment is uniform, so it contributes its midpoint times its mass;
  // HPCC's getAvg() is the same with p_0 = 0).
  double mean() const;
  // Inverse CDF with linear interpolation: for u in [0, 1), y = 100 u, the
  // segment with p_{i-1} <= y < p_i gives x_{i-1} + (x_i - x_{i-1})(y - p_{i-1})/(p_i - p_{i-1});
  // y < p_0 gives x_0. Flat segments (p_i = p_{i-1}) carry no mass and are never chosen.
  double quantile(double u) const;
  // One size from one uniform draw: ceil(quantile(u)), at least 1 byte.
  // Rounding up keeps P(size <= x_i) = p_i/100 exactly at integer points
  // (HPCC truncates instead; the two differ by under one byte per flow).
  uint64_t sample(core::Rng& rng) const;

 private:
  std::vector<Point> m_points;
  std::string m_name;
};

// CDF file: one "bytes cumulative_percent" pair per line (spaces or tabs),
// '#' starts a comment, blank lines are ignored, sizes strictly increasing,
// percents non-decreasing within 0..100, last percent = 100. Sizes are
// decimal numbers (exponent allowed), at most 2^53. The Cdf is named after
// the path. Errors: core::ConfigError("FILE:LINE:COL", key_path, reason);
// a missing file: ConfigError(path, key_path, "cannot open file: ...").
Cdf read_cdf_file(const std::string& path, const std::string& key_path);
// The same from text; `name` stands for the file in error locations.
Cdf parse_cdf(std::string_view text, const std::string& name, const std::string& key_path);

// ---------------------------------------------------------------- generators

inline constexpr uint64_t kPsPerUs = 1000000ull;
inline constexpr uint64_t kPsPerMs = 1000000000ull;

// Long flows between given pairs. Pair i starts at start_ps + i * stagger_ps
// unless it gives its own start; its size is size_bytes unless it gives its own.
struct LongFlowParams {
  struct Pair {
    uint32_t src = 0, dst = 1;
    std::optional<uint64_t> size_bytes;
    std::optional<uint64_t> start_ps;
  };
  std::vector<Pair> pairs;
  uint64_t size_bytes = 1000000000ull;  // 1 GB: outlasts 80 ms at 100 Gbps
  uint64_t start_ps = 0;
  uint64_t stagger_ps = 0;
  uint8_t pcp = 3, dscp = 26;
  std::string tag = "long";
};
std::vector<Flow> long_flows(const LongFlowParams& p, const Hosts& hosts, core::Rng& rng);

// Incast: senders -> receiver, `count` synchronized rounds `interval_ps` apart.
// Round r (0-based) of sender s starts at start_ps + r * interval_ps + j_{r,s},
// j uniform in [0, jitter_ps) (integer ps, one draw per sender per round;
// 0 = no jitter, no draws). Senders: the given list, else `fan_in` distinct
// hosts drawn uniformly from all hosts but the receiver (sorted ascending).
// Flows are listed round by round, senders in order within a round.
struct IncastParams {
  uint32_t receiver = 0;
  std::vector<uint32_t> senders;      // explicit senders (distinct, != receiver); empty = random
  uint32_t fan_in = 16;               // number of random senders when `senders` is empty
  uint64_t size_bytes = 65536;        // per sender per round
  uint64_t start_ps = 0;
  uint64_t interval_ps = kPsPerMs;
  uint32_t count = 1;                 // rounds
  uint64_t jitter_ps = 0;
  uint8_t pcp = 3, dscp = 26;
  std::string tag = "incast";
};
std::vector<Flow> incast(const IncastParams& p, const Hosts& hosts, core::Rng& rng);

// Poisson load (background and CDF workloads). Arrivals form one Poisson
// process over [start_ps, start_ps + duration_ps) with rate
//   lambda [flows/s] = load * C / (8 * mean_size)
// where C [bits/s] = sum of the link rates of the source hosts (all hosts
// when no source set is given) and mean_size [bytes] = Cdf::mean() or the
// fixed size; inter-arrival gaps are exponential with mean 1/lambda. So the
// offered bytes per second are load * C / 8 on average. Each arrival picks
// its source with probability proportional to the source's link rate (uniform
// for equal rates: the superposition of HPCC's per-host processes, each at
// load * rate_i / (8 * mean)), its destination uniformly among the
// destinations other than the source, then its size. Draw order per flow:
// gap, src, dst, size. Start times are floored to the ps. The list is sorted
// by start time. More than max_flows flows (expected or drawn) is an error.
struct BackgroundParams {
  double load = 0.1;                  // fraction of aggregate host link capacity, >= 0
  uint64_t start_ps = 0;
  uint64_t duration_ps = kPsPerMs;
  uint64_t size_bytes = 4096;         // fixed size, when cdf is not set
  std::optional<Cdf> cdf;             // sizes drawn from this CDF instead
  uint64_t max_flows = 10000000;
  uint8_t pcp = 3, dscp = 26;
  std::string tag = "background";
};
std::vector<Flow> background(const BackgroundParams& p, const Hosts& hosts, core::Rng& rng);

struct CdfWorkloadParams {
  Cdf cdf = Cdf::websearch();         // Cdf::websearch(), Cdf::fb_hadoop() or read_cdf_file()
  double load = 0.5;                  // fraction of the source hosts' link capacity, >= 0
  uint64_t start_ps = 0;
  uint64_t duration_ps = kPsPerMs;
  std::vector<uint32_t> srcs;         // source hosts (distinct); empty = every host
  std::vector<uint32_t> dsts;         // destination hosts (distinct); empty = every host
  uint64_t max_flows = 10000000;
  uint8_t pcp = 3, dscp = 26;
  std::string tag;                    // empty = the CDF's name
};
std::vector<Flow> cdf_workload(const CdfWorkloadParams& p, const Hosts& hosts, core::Rng& rng);

// Ring all-reduce over ranks r = 0..N-1 (host ranks[r]; empty = all hosts in
// index order): reduce-scatter then all-gather, 2(N-1) steps. The buffer of
// size_bytes is cut into N chunks (chunk c: size/N bytes, plus one for c <
// size % N). In step k every rank r sends chunk (r - k) mod N to rank r+1 mod N;
// that is the chunk it received in step k-1, so flow (k, r) has `after` =
// {flow (k-1, r-1 mod N)}: a rank forwards once the data has arrived.
// Flow (k, r) is at index k*N + r; every start_ps = start_ps (earliest start).
struct AllReduceParams {
  std::vector<uint32_t> ranks;
  uint64_t size_bytes = 64ull << 20;  // per-rank buffer, >= N
  uint64_t start_ps = 0;
  uint8_t pcp = 3, dscp = 26;
  std::string tag = "allreduce";
};
std::vector<Flow> ring_allreduce(const AllReduceParams& p, const Hosts& hosts, core::Rng& rng);

// All-to-all over ranks (as above): each rank's buffer of size_bytes is cut
// into N chunks (as above) and chunk j goes to rank j, in N-1 steps with a
// shift pattern: in step k = 1..N-1 rank i sends to rank (i + k) mod N. With
// `stepped`, flow (k, i) has `after` = {flow (k-1, i)}: a sender starts its
// next step once its previous step's flow has completed (one flow per sender
// per step). Without, all flows start together. Flow (k, i) is at index
// (k-1)*N + i.
struct AllToAllParams {
  std::vector<uint32_t> ranks;
  uint64_t size_bytes = 64ull << 20;  // per-rank buffer, >= N
  uint64_t start_ps = 0;
  bool stepped = true;
  uint8_t pcp = 3, dscp = 26;
  std::string tag = "alltoall";
};
std::vector<Flow> all_to_all(const AllToAllParams& p, const Hosts& hosts, core::Rng& rng);

// ---------------------------------------------------------------- HPCC flow file

// Format (HPCC traffic_gen): the first line is the number of flows; then one
// flow per line: "src dst pg dport size start_s" separated by spaces or tabs:
// host indices, priority pg (-> Flow::pcp, 0..7), destination port (0..65535,
// -> Flow::dport: HPCC's analysis scripts tell flow classes by it; it is
// reported in fct.txt and has no effect on the run), size in bytes
// (>= 1) and start time in seconds as a decimal (exponent allowed). Start
// times are converted to ps exactly from the decimal text (no binary floating
// point), rounded half up to a whole ps. Reading also accepts '#' comments and
// blank lines, which HPCC's reader does not; writing emits neither.
// The format has no DSCP, tag or dependencies: reading sets dscp and tag from
// the arguments and leaves `after` empty; writing drops them. So write then
// read reproduces every flow that has no `after`, same dscp and tag.
// With `host_of_id` (an HPCC topology, topology/hpcc.h), src and dst are the
// topology file's node ids: host_of_id[id] is that node's host index, or
// kNotHost for a switch; num_hosts is then unused.
inline constexpr uint32_t kNotHost = 0xffffffffu;
std::vector<Flow> read_flow_file(const std::string& path, const std::string& key_path,
                                 uint32_t num_hosts, const std::string& tag = "flowfile",
                                 uint8_t dscp = 26, const std::vector<uint32_t>* host_of_id = nullptr);
std::vector<Flow> parse_flow_file(std::string_view text, const std::string& name,
                                  const std::string& key_path, uint32_t num_hosts,
                                  const std::string& tag = "flowfile", uint8_t dscp = 26,
                                  const std::vector<uint32_t>* host_of_id = nullptr);
// Writes the count line and one line per flow; start as seconds with 9 to 12
// decimals (exact to the ps). With `id_of_host` (an HPCC topology's
// Topology::file_ids by host index), src and dst are written as those ids.
// Throws std::runtime_error if the file cannot be written.
void write_flow_file(const std::string& path, const std::vector<Flow>& flows);
void write_flows(std::ostream& os, const std::vector<Flow>& flows, const std::vector<uint32_t>* id_of_host = nullptr);
// ps -> "S.FFFFFFFFF[FFF]" (seconds, at least 9 decimals, trailing zeros beyond 9 trimmed).
std::string format_seconds(uint64_t ps);

}  // namespace rocesim::traffic
