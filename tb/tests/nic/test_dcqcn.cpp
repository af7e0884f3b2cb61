// DCQCN closed loop in-process: two long flows through one 100 Gbps
// bottleneck, the second 5 ms after the first, converge to within 10 % of
// each other within 50 ms with the paper preset and stay there, while the
// bottleneck queue stays near the ECN thresholds.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/config.h"
#include "core/time.h"
#include "sim/fabric.h"
#include "sim/scenario.h"

using namespace rocesim;

TEST(Dcqcn, TwoFlowsConvergeWithinTenPercentAndTheQueueStaysBounded) {
  auto cfg = core::Config::load_file(std::string(ROCESIM_SOURCE_DIR) + "/configs/scenarios/dcqcn_two_flows.yaml");
  const sim::Scenario scen = sim::read_scenario(*cfg);
  ASSERT_EQ(scen.hosts.dcqcn_preset, "paper");
  sim::Fabric fabric("fabric", scen);
  const auto& flows = fabric.flows();
  const sw::Switch& sw0 = *fabric.switches().at(0);
  // Until 50 ms after the second flow's start.
  sc_core::sc_start(core::ps(55000000000ull));
  uint64_t b0 = flows[0].bytes_received, b1 = flows[1].bytes_received;
  uint64_t max_q = 0;
  for (int ms = 0; ms < 5; ++ms) {
    // 1 ms windows, with the queue looked at every 10 us.
    for (int k = 0; k < 100; ++k) {
      sc_core::sc_start(core::ps(10000000));
      max_q = std::max<uint64_t>(max_q, sw0.queue_stats(2, 3).depth_bytes);
    }
    const double r0 = double(flows[0].bytes_received - b0) * 8 / 1e-3, r1 = double(flows[1].bytes_received - b1) * 8 / 1e-3;
    b0 = flows[0].bytes_received;
    b1 = flows[1].bytes_received;
    EXPECT_LT(std::max(r0, r1) / std::min(r0, r1), 1.10) << "window " << 55 + ms << " ms: " << r0 / 1e9 << " vs "
                                                         << r1 / 1e9 << " Gbps";
    EXPECT_GT(r0 + r1, 0.9 * 100e9 * 4096 / 4198) << "the bottleneck stays busy";
  }
  // Kmax is 100 KB: the queue stays within twice that.
  EXPECT_LT(max_q, 200000u);
  EXPECT_GT(flows[0].cnps_received, 10u);
  EXPECT_GT(flows[1].cnps_received, 10u);
  EXPECT_EQ(fabric.ledger().dropped(), 0u);
}
