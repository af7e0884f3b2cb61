// Flow lists: comparison, printing, combining, sorting and checking.
#include <algorithm>
#include <numeric>
#include <ostream>
#include <stdexcept>

#include "traffic/traffic.h"

namespace rocesim::traffic {

bool operator==(const Flow& a, const Flow& b) {
  return a.src == b.src && a.dst == b.dst && a.size_bytes == b.size_bytes && a.start_ps == b.start_ps &&
         a.pcp == b.pcp && a.dscp == b.dscp && a.dport == b.dport && a.tag == b.tag && a.after == b.after;
}

std::ostream& operator<<(std::ostream& os, const Flow& f) {
  os << "{" << f.src << "->" << f.dst << " " << f.size_bytes << "B @" << f.start_ps << "ps pcp "
     << int(f.pcp) << " dscp " << int(f.dscp) << " '" << f.tag << "'";
  if (!f.after.empty()) {
    os << " after";
    for (uint32_t a : f.after) os << " " << a;
  }
  return os << "}";
}

void append(std::vector<Flow>& all, std::vector<Flow> more) {
  if (all.size() + more.size() > UINT32_MAX) throw std::invalid_argument("flow list: more than 2^32-1 flows");
  const auto base = static_cast<uint32_t>(all.size());
  all.reserve(all.size() + more.size());
  for (Flow& f : more) {
    for (uint32_t& a : f.after) a += base;
    all.push_back(std::move(f));
  }
}

void sort_by_start(std::vector<Flow>& flows) {
  std::vector<uint32_t> order(flows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return flows[a].start_ps < flows[b].start_ps; });
  std::vector<uint32_t> new_index(flows.size());
  for (uint32_t i = 0; i < order.size(); ++i) new_index[order[i]] = i;
  std::vector<Flow> sorted;
  sorted.reserve(flows.size());
  for (uint32_t old : order) {
    Flow f = std::move(flows[old]);
    for (uint32_t& a : f.after)
      if (a < new_index.size()) a = new_index[a];  // out-of-range indices are left for check_flows
    sorted.push_back(std::move(f));
  }
  flows = std::move(sorted);
}

void check_flows(const std::vector<Flow>& flows, uint32_t num_hosts) {
  auto bad = [](size_t i, const std::string& why) {
    throw std::invalid_argument("flow " + std::to_string(i) + ": " + why);
  };
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    if (f.src >= num_hosts) bad(i, "src " + std::to_string(f.src) + " out of range (" + std::to_string(num_hosts) + " hosts)");
    if (f.dst >= num_hosts) bad(i, "dst " + std::to_string(f.dst) + " out of range (" + std::to_string(num_hosts) + " hosts)");
    if (f.src == f.dst) bad(i, "src and dst are both host " + std::to_string(f.src));
    if (f.size_bytes == 0) bad(i, "size is 0");
    if (f.pcp > 7) bad(i, "pcp " + std::to_string(f.pcp) + " above 7");
    if (f.dscp > 63) bad(i, "dscp " + std::to_string(f.dscp) + " above 63");
    for (uint32_t a : f.after) {
      if (a >= flows.size()) bad(i, "after index " + std::to_string(a) + " out of range");
      if (a == i) bad(i, "depends on itself");
    }
  }
  // Kahn's algorithm: every flow must become startable.
  std::vector<uint32_t> waiting(flows.size());
  std::vector<std::vector<uint32_t>> dependents(flows.size());
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < flows.size(); ++i) {
    waiting[i] = static_cast<uint32_t>(flows[i].after.size());
    for (uint32_t a : flows[i].after) dependents[a].push_back(i);
    if (waiting[i] == 0) ready.push_back(i);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (uint32_t d : dependents[i])
      if (--waiting[d] == 0) ready.push_back(d);
  }
  if (done != flows.size()) {
    for (size_t i = 0; i < flows.size(); ++i)
      if (waiting[i] != 0) bad(i, "in a dependency cycle (or waits on one)");
  }
}

}  // namespace rocesim::traffic
