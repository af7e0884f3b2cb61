// queues.csv on a switch with more than 512 ports: every (port, queue) keeps
// its own previous sample, so deq_bytes_interval rows of two queues never mix.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

using namespace clitest;

TEST(QueueSeries, SwitchWithMorePortsThanTheOldSlotTableKeepsEachQueueApart) {
  // One spine with 520 leaves below it: its ports 1 and 513 are 4096 slots
  // apart in a table of 8 queues per port, the two that a 4096-slot table
  // per switch used to fold together. Two identical flows leave the spine on
  // exactly those ports (h0 -> h1 and h2 -> h513, one host per leaf, equal
  // cables), so their rows must be identical, and each queue's intervals
  // must add up to what the flow sent through it.
  const std::string dir = temp_dir();
  write_file(dir + "/wide.yaml",
             "name: wide\n"
             "sim: {duration: 60us, stop_when_done: false}\n"
             "topology: {kind: leaf_spine, leaves: 520, spines: 1, hosts_per_leaf: 1}\n"
             "stats: {interval: 5us}\n"
             "switch: {buffer: {size: 64MiB}}\n"
             "flows:\n"
             "  - {src: h0, dst: h1, size: 64KiB}\n"
             "  - {src: h2, dst: h513, size: 64KiB}\n");
  const Result r = rocesim("run " + dir + "/wide.yaml --out " + dir + "/out");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::istringstream csv(slurp(dir + "/out/queues.csv"));
  std::string line;
  std::getline(csv, line);  // header
  std::map<uint32_t, std::vector<uint64_t>> rows;  // spine port -> deq_bytes_interval per row
  while (std::getline(csv, line)) {
    std::vector<std::string> c;
    std::stringstream ls(line);
    for (std::string f; std::getline(ls, f, ',');) c.push_back(f);
    ASSERT_EQ(c.size(), 14u) << line;
    if (c[1] != "spine0") continue;
    rows[std::stoul(c[2])].push_back(std::stoull(c[10]));
  }
  ASSERT_EQ(rows.count(1), 1u) << "spine0 port 1 has rows";
  ASSERT_EQ(rows.count(513), 1u) << "spine0 port 513 has rows";
  EXPECT_EQ(rows[1], rows[513]) << "the two symmetric flows' queues";
  // 64 KiB at MTU 1024 in 64 WRITE packets of 1024 B: Ethernet 14 + 802.1Q 4
  // + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4 + FCS 4 = 1090 B, and the
  // first carries a 16 B RETH: 64 * 1090 + 16 bytes through each queue.
  uint64_t sum = 0;
  for (uint64_t b : rows[1]) sum += b;
  EXPECT_EQ(sum, 64u * 1090 + 16);
  std::system(("rm -rf " + dir).c_str());
}
