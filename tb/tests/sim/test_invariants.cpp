// --check-invariants (sim/invariants.h): a clean run passes every check; a
// model whose accounting is corrupted on purpose (a cell taken off a switch's
// free list behind the MMU's back, a frame created and never handed to the
// model, a counter wrapped below zero, bytes counted that no in-order packet
// carried) fails with the invariant that breaks, naming its node and values.
// Each test elaborates one fabric in-process (one simulation per test
// process); the CLI tests run the rocesim binary as users do.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/config.h"
#include "sim/fabric.h"
#include "sim/invariants.h"
#include "sim/scenario.h"

using namespace rocesim;

namespace {

// pfc_incast.yaml (16-to-1 through one 100G switch, lossless, PFC) cut down
// to 4 senders of 128 KiB each; with RC and DCQCN when rc is set.
sim::Scenario incast(bool rc) {
  auto cfg = core::Config::load_file(clitest::src_dir() + "/configs/scenarios/pfc_incast.yaml");
  cfg->apply_set("sim.duration=400us");
  cfg->apply_set("topology.hosts=5");
  cfg->apply_set("flows=[{src: h0, dst: h4, size: 128KiB}, {src: h1, dst: h4, size: 128KiB}, "
                 "{src: h2, dst: h4, size: 128KiB}, {src: h3, dst: h4, size: 128KiB}]");
  if (rc) {
    cfg->apply_set("hosts.transport=rc");
    cfg->apply_set("hosts.cc=dcqcn");
  }
  return sim::read_scenario(*cfg);
}

}  // namespace

// A correct model holds every invariant at every check: the run completes,
// checked more than once (a 1 us first slice, then at least every 10 us of
// simulated time) and at its end.
TEST(Invariants, CleanRcIncastHoldsEveryInvariant) {
  const sim::Scenario s = incast(true);
  sim::Fabric f("fabric", s);
  f.check_invariants(true);
  const sim::RunResult r = f.run();
  ASSERT_NE(f.invariants(), nullptr);
  EXPECT_TRUE(f.invariants()->ok()) << f.invariants()->violation().message();
  EXPECT_TRUE(r.all_flows_done);
  // 4 x 128 KiB into one 100G port take at least 4 x 128 KiB x 8 / 100 Gbps = 42 us,
  // so with checks at least every 10 us there are more than 4 (and the final one).
  EXPECT_GT(f.invariants()->checks(), 4u);
}

// One cell taken off the first switch's free list without the MMU knowing:
// the buffer then has one cell more in use than the MMU charged. The first
// check finds it and names the cell-accounting invariant and the switch.
TEST(Invariants, CellTakenBehindTheMmusBackIsReported) {
  const sim::Scenario s = incast(false);
  sim::Fabric f("fabric", s);
  ASSERT_FALSE(f.switches().empty());
  sw::Switch& sw0 = *f.switches()[0];
  sw0.qm_model_for_test().take_cells_unaccounted_for_test(1);  // the test-only corruption
  f.check_invariants(true);
  f.run();
  const sim::InvariantChecker& inv = *f.invariants();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.violation().invariant, "cell-accounting");
  EXPECT_EQ(inv.violation().node, sw0.basename());
  // At the first check after the leak: the buffer's cells in use exceed the
  // MMU's by exactly the leaked cell.
  EXPECT_EQ(inv.checks(), 1u);
  const std::string m = inv.violation().message();
  EXPECT_EQ(m.rfind("cell-accounting on " + std::string(sw0.basename()) + " at ", 0), 0u) << m;
  const uint32_t buffer_used = sw0.qm_model().total_cells() - sw0.qm_model().free_cells();
  EXPECT_NE(m.find("MMU cells in use " + std::to_string(sw0.mmu().total_used()) + " != buffer cells in use " +
                   std::to_string(buffer_used)),
            std::string::npos)
      << m;
  EXPECT_EQ(buffer_used, sw0.mmu().total_used() + 1);
  // The first violation ends the run early: the flows need at least 42 us.
  EXPECT_LT(inv.violation().time_ps, s.sim.duration_ps);
}

// A frame taken from the ledger (counted as sent) and never handed to any
// port: sent exceeds delivered + dropped + in flight by one.
TEST(Invariants, FrameLostOutsideTheModelBreaksConservation) {
  const sim::Scenario s = incast(false);
  sim::Fabric f("fabric", s);
  const_cast<link::Ledger&>(f.ledger()).create();  // the test-only corruption: a leaked frame
  f.check_invariants(true);
  f.run();
  const sim::InvariantChecker& inv = *f.invariants();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.violation().invariant, "packet-conservation");
  EXPECT_EQ(inv.violation().node, "fabric");
  const link::Ledger& l = f.ledger();
  const uint64_t in_flight = l.sent() - 1 - l.delivered() - l.dropped();
  EXPECT_NE(inv.violation().detail.find("sent " + std::to_string(l.sent()) + " != delivered " +
                                        std::to_string(l.delivered()) + " + dropped " + std::to_string(l.dropped()) +
                                        " + in flight " + std::to_string(in_flight)),
            std::string::npos)
      << inv.violation().detail;
}

// A counter decremented below zero wraps to 2^64 - 1: reported as an underflow
// with the counter's name and the flow it belongs to.
TEST(Invariants, WrappedCounterIsAnUnderflow) {
  const sim::Scenario s = incast(false);
  sim::Fabric f("fabric", s);
  auto& rec = const_cast<host::FlowRecord&>(f.flows()[2]);
  rec.retransmitted -= 1;  // the test-only corruption: 0 - 1
  f.check_invariants(true);
  f.run();
  const sim::InvariantChecker& inv = *f.invariants();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.violation().invariant, "counter-underflow");
  EXPECT_EQ(inv.violation().node, "h4");  // the flow's receiver
  EXPECT_NE(inv.violation().detail.find("flow 2 (h2 -> h4) retransmitted = 18446744073709551615"), std::string::npos)
      << inv.violation().detail;
}

// RC: one byte counted at the receiver that no in-order packet carried. The
// bytes received no longer equal the payload of the packets before the next
// expected PSN (full 4096 B MTU payloads for 128 KiB messages).
TEST(Invariants, BytesNotCarriedByInOrderPacketsBreakPsnOrder) {
  const sim::Scenario s = incast(true);
  sim::Fabric f("fabric", s);
  auto& rec = const_cast<host::FlowRecord&>(f.flows()[0]);
  rec.bytes_received += 1;  // the test-only corruption
  f.check_invariants(true);
  f.run();
  const sim::InvariantChecker& inv = *f.invariants();
  ASSERT_FALSE(inv.ok());
  EXPECT_EQ(inv.violation().invariant, "rc-psn-order");
  EXPECT_EQ(inv.violation().node, "h4");
  // bytes = 4096 x packets + 1 at the check: the message shows both numbers.
  const uint64_t pkts = (rec.bytes_received - 1) / 4096;
  EXPECT_NE(inv.violation().detail.find("bytes received " + std::to_string(rec.bytes_received) + " != the first " +
                                        std::to_string(pkts) + " packets' " + std::to_string(pkts * 4096) + " bytes"),
            std::string::npos)
      << inv.violation().detail;
}

// The CLI flag: a shipped RC + DCQCN + PFC scenario passes, and checking does
// not change a single output byte (slices resume the kernel where it stopped;
// the checks only read). summary.json differs in its wall-clock fields only.
TEST(InvariantsCli, CheckedRunIsCleanAndIdentical) {
  const std::string dir = clitest::temp_dir();
  const std::string cfg = clitest::src_dir() + "/configs/scenarios/incast_dcqcn.yaml";
  const std::string sets = " --set sim.duration=300us --quiet";
  const clitest::Result plain = clitest::rocesim("run " + cfg + " --out " + dir + "/plain" + sets);
  ASSERT_EQ(plain.rc, 0) << plain.err;
  const clitest::Result checked = clitest::rocesim("run " + cfg + " --out " + dir + "/checked" + sets +
                                                   " --check-invariants");
  ASSERT_EQ(checked.rc, 0) << checked.err;
  EXPECT_EQ(checked.err, "");
  for (const char* f : {"flows.csv", "queues.csv", "pfc.csv", "cc.csv", "config.resolved.yaml"}) {
    EXPECT_EQ(clitest::slurp(dir + "/plain/" + f), clitest::slurp(dir + "/checked/" + f)) << f;
  }
  EXPECT_EQ(clitest::strip_wall(clitest::slurp(dir + "/plain/summary.json")),
            clitest::strip_wall(clitest::slurp(dir + "/checked/summary.json")));
  std::system(("rm -rf " + dir).c_str());
}

// The flag belongs to `run`; validate does not simulate.
TEST(InvariantsCli, ValidateRejectsTheFlag) {
  const clitest::Result r =
      clitest::rocesim("validate " + clitest::src_dir() + "/configs/scenarios/two_hosts.yaml --check-invariants");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--check-invariants"), std::string::npos) << r.err;
}
