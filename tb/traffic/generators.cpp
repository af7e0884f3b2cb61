// The generators: long flows, incast, Poisson load (background and CDF
// workloads) and collectives (ring all-reduce, all-to-all). See traffic.h.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "traffic/traffic.h"

namespace rocesim::traffic {

namespace {

[[noreturn]] void bad(const std::string& kind, const std::string& param, const std::string& value,
                      const std::string& why) {
  throw std::invalid_argument(kind + "." + param + " = " + value + ": " + why);
}

[[noreturn]] void bad(const std::string& kind, const std::string& param, const std::string& why) {
  throw std::invalid_argument(kind + "." + param + ": " + why);
}

void check_host(const std::string& kind, const std::string& param, uint32_t h, const Hosts& hosts) {
  if (h >= hosts.count())
    bad(kind, param, std::to_string(h), "host out of range (" + std::to_string(hosts.count()) + " hosts)");
}

// Hosts in range and distinct; `param` names the list.
void check_host_list(const std::string& kind, const std::string& param, const std::vector<uint32_t>& list,
                     const Hosts& hosts) {
  std::vector<bool> seen(hosts.count(), false);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = param + "[" + std::to_string(i) + "]";
    check_host(kind, p, list[i], hosts);
    if (seen[list[i]]) bad(kind, p, std::to_string(list[i]), "host listed twice");
    seen[list[i]] = true;
  }
}

void check_class(const std::string& kind, uint8_t pcp, uint8_t dscp) {
  if (pcp > 7) bad(kind, "pcp", std::to_string(pcp), "must be 0..7");
  if (dscp > 63) bad(kind, "dscp", std::to_string(dscp), "must be 0..63");
}

// a + b * c, or an error naming `what` if it does not fit in 64 bits.
uint64_t time_at(const std::string& kind, const std::string& what, uint64_t a, uint64_t b, uint64_t c) {
  const unsigned __int128 t = a + static_cast<unsigned __int128>(b) * c;
  if (t > UINT64_MAX) bad(kind, what, "time beyond 2^64 ps");
  return static_cast<uint64_t>(t);
}

Flow make_flow(uint32_t src, uint32_t dst, uint64_t size, uint64_t start, uint8_t pcp, uint8_t dscp,
               const std::string& tag) {
  Flow f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size;
  f.start_ps = start;
  f.pcp = pcp;
  f.dscp = dscp;
  f.tag = tag;
  return f;
}

std::vector<uint32_t> all_hosts(const Hosts& hosts) {
  std::vector<uint32_t> v(hosts.count());
  for (uint32_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

// Shared Poisson arrival engine (see the comment above BackgroundParams).
struct PoissonSpec {
  std::string kind;
  double load;
  uint64_t start_ps, duration_ps;
  std::vector<uint32_t> srcs, dsts;  // empty = all hosts
  uint64_t fixed_size;               // used when cdf == nullptr
  const Cdf* cdf;
  uint64_t max_flows;
  uint8_t pcp, dscp;
  std::string tag;
};

std::vector<Flow> poisson_flows(const PoissonSpec& s, const Hosts& hosts, core::Rng& rng) {
  const std::string& k = s.kind;
  if (!(s.load >= 0) || !std::isfinite(s.load)) bad(k, "load", std::to_string(s.load), "must be a finite number >= 0");
  check_class(k, s.pcp, s.dscp);
  time_at(k, "duration", s.start_ps, s.duration_ps, 1);
  check_host_list(k, "srcs", s.srcs, hosts);
  check_host_list(k, "dsts", s.dsts, hosts);
  const std::vector<uint32_t> srcs = s.srcs.empty() ? all_hosts(hosts) : s.srcs;
  const std::vector<uint32_t> dsts = s.dsts.empty() ? all_hosts(hosts) : s.dsts;
  double mean;
  if (s.cdf) {
    if (s.cdf->empty()) bad(k, "cdf", "empty CDF (no points)");
    mean = s.cdf->mean();
    if (!(mean >= 1)) bad(k, "cdf", s.cdf->name(), "mean flow size below 1 byte");
  } else {
    if (s.fixed_size == 0) bad(k, "size", "0", "must be at least 1 byte");
    mean = static_cast<double>(s.fixed_size);
  }

  // Each source needs a destination other than itself.
  std::vector<int64_t> dst_pos(hosts.count(), -1);
  for (size_t i = 0; i < dsts.size(); ++i) dst_pos[dsts[i]] = static_cast<int64_t>(i);
  for (uint32_t src : srcs)
    if (dsts.size() < 2 && (dsts.empty() || dsts[0] == src))
      bad(k, "dsts", "no destination other than source host " + std::to_string(src));

  // Source weights: prefix sums of link rates.
  std::vector<uint64_t> prefix(srcs.size());
  unsigned __int128 total = 0;
  for (size_t i = 0; i < srcs.size(); ++i) {
    total += hosts.rate_bps[srcs[i]];
    if (total > UINT64_MAX) bad(k, "srcs", "total link rate beyond 2^64 bps");
    prefix[i] = static_cast<uint64_t>(total);
  }
  if (s.load == 0 || s.duration_ps == 0) return {};
  if (total == 0) bad(k, "srcs", "source hosts have no link capacity (rate 0)");
  const double capacity_bps = static_cast<double>(static_cast<uint64_t>(total));

  // lambda [flows/s] = load * C / (8 * mean); gaps exponential with mean 1/lambda.
  const double lambda = s.load * capacity_bps / (8.0 * mean);
  const double expected = lambda * static_cast<double>(s.duration_ps) * 1e-12;
  if (expected > static_cast<double>(s.max_flows))
    bad(k, "load", std::to_string(s.load),
        "about " + std::to_string(static_cast<uint64_t>(expected)) +
            " flows expected, above the limit of " + std::to_string(s.max_flows) +
            " flows per generator (lower load or duration, or larger sizes)");
  const double gap_mean_ps = 1e12 / lambda;
  const double window = static_cast<double>(s.duration_ps);

  std::vector<Flow> out;
  out.reserve(static_cast<size_t>(expected + 4 * std::sqrt(expected) + 16));
  double t = 0;  // ps since start_ps
  for (;;) {
    t += rng.exponential(gap_mean_ps);
    if (!(t < window)) break;
    if (out.size() >= s.max_flows)
      bad(k, "load", std::to_string(s.load), "more than the limit of " + std::to_string(s.max_flows) + " flows per generator");
    const uint64_t v = rng.below(prefix.back());
    const size_t si = static_cast<size_t>(std::upper_bound(prefix.begin(), prefix.end(), v) - prefix.begin());
    const uint32_t src = srcs[si];
    const int64_t skip = dst_pos[src];
    uint64_t di;
    if (skip >= 0) {
      di = rng.below(dsts.size() - 1);
      if (di >= static_cast<uint64_t>(skip)) ++di;
    } else {
      di = rng.below(dsts.size());
    }
    const uint64_t size = s.cdf ? s.cdf->sample(rng) : s.fixed_size;
    out.push_back(make_flow(src, dsts[di], size, s.start_ps + static_cast<uint64_t>(t), s.pcp, s.dscp, s.tag));
  }
  return out;
}

// Ranks of a collective: the given hosts or all; at least 2, distinct, in range.
std::vector<uint32_t> collective_ranks(const std::string& kind, const std::vector<uint32_t>& given,
                                       uint64_t size, const Hosts& hosts) {
  check_host_list(kind, "ranks", given, hosts);
  std::vector<uint32_t> r = given.empty() ? all_hosts(hosts) : given;
  if (r.size() < 2) bad(kind, "ranks", std::to_string(r.size()) + " ranks: need at least 2");
  if (size < r.size())
    bad(kind, "size", std::to_string(size), "must be at least the number of ranks (" + std::to_string(r.size()) + ")");
  return r;
}

// Chunk c of a buffer cut into n: size/n, plus one byte for the first size % n chunks.
uint64_t chunk(uint64_t size, uint64_t n, uint64_t c) { return size / n + (c < size % n ? 1 : 0); }

}  // namespace

std::vector<Flow> long_flows(const LongFlowParams& p, const Hosts& hosts, core::Rng&) {
  const std::string k = "long";
  check_class(k, p.pcp, p.dscp);
  std::vector<Flow> out;
  for (size_t i = 0; i < p.pairs.size(); ++i) {
    const LongFlowParams::Pair& pr = p.pairs[i];
    const std::string at = "pairs[" + std::to_string(i) + "]";
    check_host(k, at + ".src", pr.src, hosts);
    check_host(k, at + ".dst", pr.dst, hosts);
    if (pr.src == pr.dst) bad(k, at + ".dst", std::to_string(pr.dst), "same host as src");
    const uint64_t size = pr.size_bytes.value_or(p.size_bytes);
    if (size == 0) bad(k, at + ".size", "0", "must be at least 1 byte");
    const uint64_t start = pr.start_ps ? *pr.start_ps : time_at(k, at + ".start", p.start_ps, i, p.stagger_ps);
    out.push_back(make_flow(pr.src, pr.dst, size, start, p.pcp, p.dscp, p.tag));
  }
  return out;
}

std::vector<Flow> incast(const IncastParams& p, const Hosts& hosts, core::Rng& rng) {
  const std::string k = "incast";
  check_class(k, p.pcp, p.dscp);
  check_host(k, "receiver", p.receiver, hosts);
  if (p.size_bytes == 0) bad(k, "size", "0", "must be at least 1 byte");
  if (p.count == 0) bad(k, "count", "0", "must be at least 1 round");
  if (p.count > 1 && p.interval_ps == 0) bad(k, "interval", "0", "must be > 0 with more than one round");
  const uint64_t last = time_at(k, "interval", p.start_ps, p.count - 1, p.interval_ps);
  time_at(k, "jitter", last, p.jitter_ps, 1);

  std::vector<uint32_t> senders = p.senders;
  if (!senders.empty()) {
    check_host_list(k, "senders", senders, hosts);
    for (size_t i = 0; i < senders.size(); ++i)
      if (senders[i] == p.receiver)
        bad(k, "senders[" + std::to_string(i) + "]", std::to_string(senders[i]), "is the receiver");
  } else {
    if (p.fan_in == 0 || p.fan_in >= hosts.count())
      bad(k, "fan_in", std::to_string(p.fan_in),
          "must be 1.." + std::to_string(hosts.count() > 0 ? hosts.count() - 1 : 0) + " (hosts other than the receiver)");
    // Partial Fisher-Yates over the hosts other than the receiver: fan_in distinct, uniformly.
    std::vector<uint32_t> pool;
    pool.reserve(hosts.count() - 1);
    for (uint32_t h = 0; h < hosts.count(); ++h)
      if (h != p.receiver) pool.push_back(h);
    for (uint32_t i = 0; i < p.fan_in; ++i) std::swap(pool[i], pool[i + rng.below(pool.size() - i)]);
    senders.assign(pool.begin(), pool.begin() + p.fan_in);
    std::sort(senders.begin(), senders.end());
  }

  std::vector<Flow> out;
  out.reserve(static_cast<size_t>(p.count) * senders.size());
  for (uint32_t r = 0; r < p.count; ++r) {
    const uint64_t round_start = p.start_ps + static_cast<uint64_t>(r) * p.interval_ps;
    for (uint32_t s : senders) {
      const uint64_t jitter = p.jitter_ps ? rng.below(p.jitter_ps) : 0;
      out.push_back(make_flow(s, p.receiver, p.size_bytes, round_start + jitter, p.pcp, p.dscp, p.tag));
    }
  }
  return out;
}

std::vector<Flow> background(const BackgroundParams& p, const Hosts& hosts, core::Rng& rng) {
  PoissonSpec s{"background", p.load, p.start_ps, p.duration_ps, {}, {}, p.size_bytes,
                p.cdf ? &*p.cdf : nullptr, p.max_flows, p.pcp, p.dscp, p.tag};
  return poisson_flows(s, hosts, rng);
}

std::vector<Flow> cdf_workload(const CdfWorkloadParams& p, const Hosts& hosts, core::Rng& rng) {
  PoissonSpec s{"cdf_workload", p.load, p.start_ps, p.duration_ps, p.srcs, p.dsts, 0, &p.cdf,
                p.max_flows, p.pcp, p.dscp, p.tag.empty() ? p.cdf.name() : p.tag};
  return poisson_flows(s, hosts, rng);
}

std::vector<Flow> ring_allreduce(const AllReduceParams& p, const Hosts& hosts, core::Rng&) {
  const std::string k = "allreduce";
  check_class(k, p.pcp, p.dscp);
  const std::vector<uint32_t> ranks = collective_ranks(k, p.ranks, p.size_bytes, hosts);
  const uint64_t n = ranks.size();
  const uint64_t steps = 2 * (n - 1);
  if (n * steps > UINT32_MAX) bad(k, "ranks", std::to_string(n) + " ranks: too many flows for 32-bit indices");
  std::vector<Flow> out;
  out.reserve(n * steps);
  for (uint64_t step = 0; step < steps; ++step) {
    for (uint64_t r = 0; r < n; ++r) {
      // Rank r sends chunk (r - step) mod n: the one it received in step - 1
      // (reduce-scatter for step < n-1, all-gather after).
      const uint64_t c = (r + steps * n - step) % n;
      Flow f = make_flow(ranks[r], ranks[(r + 1) % n], chunk(p.size_bytes, n, c), p.start_ps, p.pcp, p.dscp, p.tag);
      if (step > 0) f.after.push_back(static_cast<uint32_t>((step - 1) * n + (r + n - 1) % n));
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::vector<Flow> all_to_all(const AllToAllParams& p, const Hosts& hosts, core::Rng&) {
  const std::string k = "alltoall";
  check_class(k, p.pcp, p.dscp);
  const std::vector<uint32_t> ranks = collective_ranks(k, p.ranks, p.size_bytes, hosts);
  const uint64_t n = ranks.size();
  if (n * (n - 1) > UINT32_MAX) bad(k, "ranks", std::to_string(n) + " ranks: too many flows for 32-bit indices");
  std::vector<Flow> out;
  out.reserve(n * (n - 1));
  for (uint64_t step = 1; step < n; ++step) {
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t j = (i + step) % n;  // shift pattern: every rank sends and receives once per step
      Flow f = make_flow(ranks[i], ranks[j], chunk(p.size_bytes, n, j), p.start_ps, p.pcp, p.dscp, p.tag);
      if (p.stepped && step > 1) f.after.push_back(static_cast<uint32_t>((step - 2) * n + i));
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace rocesim::traffic
