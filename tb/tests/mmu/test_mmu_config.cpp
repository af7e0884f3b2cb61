// validate(): bad buffer configurations are rejected with messages that name
// the port, PG or queue, the pool and the numbers (the caller exits 2).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "mmu_test_util.h"

namespace rocesim::mmu::test {
namespace {

::testing::AssertionResult has_error(const std::vector<std::string>& errs, const std::string& text) {
  for (const std::string& e : errs)
    if (e.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure() << "no error contains \"" << text << "\"; got:";
  for (const std::string& e : errs) r << "\n  " << e;
  return r;
}

TEST(Validate, BaseConfigIsValid) {
  EXPECT_TRUE(validate(base_config(4, 1000, 500, 500)).empty());
}

TEST(Validate, ReservesPlusHeadroomLargerThanTheBuffer) {
  Config c = base_config(4, 1000, 100, 100);
  for (PortConfig& p : c.ports) {
    for (PgProfile& g : p.pgs) g.reserved_cells = 20;  // 4 * 8 * 20 = 640
    for (QueueProfile& q : p.queues) q.reserved_cells = 5;  // 160
    p.pgs[3].lossless = true;
    p.pgs[3].headroom_cells = 60;  // 240
  }
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "reserved cells (ingress 640 + egress 160) plus headroom 240 exceed the buffer's 1000 cells"));
  EXPECT_THROW(Mmu{c}, std::invalid_argument);
  // Just fitting: 640 + 160 + 200 = 1000, but the ingress view is then
  // 100 + 640 + 200 = 940, fine.
  for (PortConfig& p : c.ports) p.pgs[3].headroom_cells = 50;
  EXPECT_TRUE(validate(c).empty()) << validate(c).front();
}

TEST(Validate, SharedHeadroomPoolCountsInsteadOfPerPgHeadroom) {
  Config c = base_config(2, 1000, 100, 100);
  c.ports[0].pgs[3].lossless = true;
  c.ports[0].pgs[3].headroom_cells = 5000;  // a limit inside the shared pool, not a reservation
  c.shared_headroom_cells = 950;
  const auto errs = validate(c);
  EXPECT_FALSE(has_error(errs, "reserved cells")) << "0 + 0 + 950 fits";
  EXPECT_TRUE(has_error(errs, "ingress pools (100 cells in 1 pool) plus ingress reserved 0 plus headroom 950 = 1050 cells exceed the buffer's 1000 cells"));
  c.shared_headroom_cells = 900;
  EXPECT_TRUE(validate(c).empty());
  EXPECT_EQ(reserved_totals(c).headroom, 900u);
}

TEST(Validate, PgMappedToAPoolThatDoesNotExist) {
  Config c = base_config(4, 1000, 100, 100);
  c.ports[2].pgs[3].pool = 5;
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "PG 3 of port 2 maps to pool 5, which does not exist (2 pools: 0..1)"));
  EXPECT_EQ(errs.size(), 1u);
  try {
    Mmu m(c);
    FAIL() << "constructor accepted a bad config";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PG 3 of port 2 maps to pool 5"), std::string::npos);
  }
}

TEST(Validate, WrongPoolTypes) {
  Config c = base_config(2, 1000, 100, 100);
  c.ports[1].pgs[0].pool = kEgressPool;
  c.ports[0].queues[6].pool = kIngressPool;
  c.ports[0].queues[7].pool = 9;
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "PG 0 of port 1 maps to pool 1 ('egress_pool'), an egress pool; a PG needs an ingress pool"));
  EXPECT_TRUE(has_error(errs, "queue 6 of port 0 maps to pool 0 ('ingress_pool'), an ingress pool; a queue needs an egress pool"));
  EXPECT_TRUE(has_error(errs, "queue 7 of port 0 maps to pool 9, which does not exist"));
}

TEST(Validate, DynamicThOutOfRange) {
  Config c = base_config(2, 1000, 100, 100);
  c.ports[1].queues[2].threshold = dyn(8);
  c.ports[0].pgs[5].threshold = dyn(-9);
  c.ports[0].pgs[6].threshold = Threshold{ThresholdMode::static_th, 99, 10};  // n unused when static
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "queue 2 of port 1: dynamic_th 8 is outside [-7, 7]"));
  EXPECT_TRUE(has_error(errs, "PG 5 of port 0: dynamic_th -9 is outside [-7, 7]"));
  EXPECT_EQ(errs.size(), 2u);
  // A from_pool threshold takes the pool's mode: dynamic egress pool -> n checked.
  Config d = base_config(2, 1000, 100, 100);
  d.ports[0].queues[0].threshold = Threshold{ThresholdMode::from_pool, 12, 0};
  EXPECT_TRUE(has_error(validate(d), "queue 0 of port 0: dynamic_th 12"));
}

TEST(Validate, HeadroomMustMatchLossless) {
  Config c = base_config(2, 1000, 100, 100);
  c.ports[1].pgs[3].lossless = true;
  c.ports[1].pgs[0].headroom_cells = 100;
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "PG 3 of port 1 is lossless but has no headroom (headroom_cells 0)"));
  EXPECT_TRUE(has_error(errs, "PG 0 of port 1 is lossy but has headroom 100 cells"));
}

TEST(Validate, IngressViewMustFitTheBuffer) {
  Config c = base_config(2, 1000, 900, 100);
  c.ports[0].pgs[0].reserved_cells = 60;
  c.ports[0].pgs[3].lossless = true;
  c.ports[0].pgs[3].headroom_cells = 50;
  EXPECT_TRUE(has_error(validate(c), "ingress pools (900 cells in 1 pool) plus ingress reserved 60 plus headroom 50 = 1010 cells exceed the buffer's 1000 cells"));
}

TEST(Validate, PoolsAndSizes) {
  Config c = base_config(1, 1000, 100, 2000);
  c.pools[0].mode = ThresholdMode::from_pool;
  c.cell_bytes = 0;
  const auto errs = validate(c);
  EXPECT_TRUE(has_error(errs, "pool 1 ('egress_pool') has 2000 cells, more than the buffer's 1000 cells"));
  EXPECT_TRUE(has_error(errs, "pool 0 ('ingress_pool') has threshold mode from_pool"));
  EXPECT_TRUE(has_error(errs, "cell_bytes is 0"));
  Config e;
  const auto e_errs = validate(e);
  EXPECT_TRUE(has_error(e_errs, "total_cells is 0"));
  EXPECT_TRUE(has_error(e_errs, "no service pools"));
  EXPECT_TRUE(has_error(e_errs, "no ports"));
  Config only_ingress = base_config(1, 1000, 100, 100);
  only_ingress.pools.pop_back();
  for (QueueProfile& q : only_ingress.ports[0].queues) q.pool = 0;
  EXPECT_TRUE(has_error(validate(only_ingress), "no egress pool is configured"));
}

}  // namespace
}  // namespace rocesim::mmu::test
