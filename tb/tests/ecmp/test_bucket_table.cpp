// The bucket indirection table and its rebuild: a member going down moves
// only the flows that were on it, spread over the survivors; coming back it
// takes a fair share and nothing more. Expected counts follow from the
// bucket arithmetic (B buckets over N members: floor/ceil of B/N), stated at
// each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ecmp/ecmp.h"

using namespace rocesim::ecmp;

namespace {

Key random_key(std::mt19937& rng) {
  Key k;
  k.src_ip = 0x0A000000u | (rng() & 0xFFFF);
  k.dst_ip = 0x0A000000u | (rng() & 0xFFFF);
  k.proto = 17;
  k.sport = static_cast<uint16_t>(0xC000 | (rng() & 0x3FFF));  // RoCE's entropy range
  k.dport = 4791;
  return k;
}

// The table's invariant (ecmp.h): up members' counts within one of each
// other, counts add up to the buckets held, no bucket on a down member.
void expect_balanced(const BucketTable& t) {
  uint32_t lo = UINT32_MAX, hi = 0, held = 0;
  for (uint32_t m = 0; m < t.members(); ++m) {
    if (!t.is_up(m)) {
      EXPECT_EQ(t.count(m), 0u) << "member " << m;
      continue;
    }
    lo = std::min(lo, t.count(m));
    hi = std::max(hi, t.count(m));
    held += t.count(m);
  }
  if (t.members_up() == 0) return;
  EXPECT_LE(hi - lo, 1u);
  EXPECT_EQ(held, t.buckets());
  for (uint32_t b = 0; b < t.buckets(); ++b) {
    ASSERT_NE(t.at(b), BucketTable::kNone);
    ASSERT_TRUE(t.is_up(t.at(b))) << "bucket " << b;
  }
}

std::vector<uint16_t> owners(const BucketTable& t) {
  std::vector<uint16_t> o(t.buckets());
  for (uint32_t b = 0; b < t.buckets(); ++b) o[b] = t.at(b);
  return o;
}

}  // namespace

TEST(BucketTable, FilledRoundRobin) {
  const BucketTable t(6, 8);
  ASSERT_EQ(t.buckets(), 256u);
  for (uint32_t b = 0; b < 256; ++b) EXPECT_EQ(t.at(b), b % 6);
  // 256 = 6 x 42 + 4: members 0..3 hold 43, 4 and 5 hold 42.
  for (uint32_t m = 0; m < 6; ++m) EXPECT_EQ(t.count(m), m < 4 ? 43u : 42u);
}

TEST(BucketTable, OneOfEightDownMovesOnlyItsFlowsAndSpreadsThem) {
  std::mt19937 rng(21);
  Config c;
  c.function = Function::crc16_arc;
  c.selection = Selection::table;
  c.table_bits = 8;
  const std::vector<uint16_t> ports{40, 41, 42, 43, 44, 45, 46, 47};
  Unit u(c, {ports});
  const int K = 20000;
  std::vector<Key> keys;
  std::vector<uint32_t> before;
  for (int i = 0; i < K; ++i) {
    keys.push_back(random_key(rng));
    before.push_back(u.pick(0, keys.back()));
  }
  const uint32_t down = 3, down_port = ports[down];
  const int on_down = static_cast<int>(std::count(before.begin(), before.end(), down_port));
  // 256 buckets / 8: member 3 held 32 buckets, all of which move.
  EXPECT_EQ(u.set_member_up(0, down, false), 32u);
  expect_balanced(*u.table(0));
  std::vector<int> received(ports.size(), 0);
  for (int i = 0; i < K; ++i) {
    const uint32_t now = u.pick(0, keys[i]);
    ASSERT_NE(now, down_port);
    if (before[i] != down_port) {
      ASSERT_EQ(now, before[i]) << "key " << i << " was not on the member that went down but moved";
    } else {
      ++received[now - 40];
    }
  }
  // Its 32 buckets over 7 survivors: 32 = 7 x 4 + 4, so each gets 4 or 5;
  // the flows follow their buckets, so each survivor receives between half
  // and 1.5 times its 1/7 share of them (expected 4/32 .. 5/32 of them).
  const double share = on_down / 7.0;
  for (uint32_t m = 0; m < ports.size(); ++m) {
    if (m == down) continue;
    EXPECT_GT(received[m], 0.5 * share) << "survivor " << m;
    EXPECT_LT(received[m], 1.5 * share) << "survivor " << m;
  }
  // Bucket level, exactly: each survivor now holds 32 + 4 or 32 + 5.
  for (uint32_t m = 0; m < ports.size(); ++m)
    if (m != down) {
      EXPECT_TRUE(u.table(0)->count(m) == 36 || u.table(0)->count(m) == 37) << m;
    }

  // Back up: it takes floor(256 / 8) = 32 buckets, a fair share, and nothing
  // else moves: the flows that move all go to it, and with 256 a multiple of
  // 8 they are exactly the flows it had (its home buckets come back).
  EXPECT_EQ(u.set_member_up(0, down, true), 32u);
  expect_balanced(*u.table(0));
  int moved = 0;
  for (int i = 0; i < K; ++i) {
    const uint32_t now = u.pick(0, keys[i]);
    ASSERT_EQ(now, before[i]) << "key " << i;
    moved += now == down_port;
  }
  EXPECT_EQ(moved, on_down);
}

TEST(BucketTable, ComingBackMovesAtMostAFairShare) {
  // 256 buckets over 6 (not a multiple): a member coming back takes
  // floor(256 / U) buckets, at most ceil(256 / U), and every bucket that
  // changes goes to it.
  BucketTable t(6, 8);
  const std::vector<uint16_t> start = owners(t);
  EXPECT_EQ(t.down(2), 43u);  // it held 43 (first 4 members hold 43)
  expect_balanced(t);
  EXPECT_EQ(t.down(2), 0u);   // already down
  const std::vector<uint16_t> mid = owners(t);
  for (uint32_t b = 0; b < 256; ++b)
    if (start[b] != 2) {
      EXPECT_EQ(mid[b], start[b]) << b;
    }
  const uint32_t moved = t.up(2);
  EXPECT_EQ(moved, 256u / 6);
  EXPECT_LE(moved, (256u + 5) / 6);
  expect_balanced(t);
  const std::vector<uint16_t> end = owners(t);
  uint32_t changed = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    if (end[b] == mid[b]) continue;
    ++changed;
    EXPECT_EQ(end[b], 2u) << "bucket " << b << " moved to another member";
  }
  EXPECT_EQ(changed, moved);
  EXPECT_EQ(t.up(2), 0u);  // already up
}

TEST(BucketTable, SeveralDownAndUpKeepBalanceAndMoveOnlyWhatMust) {
  BucketTable t(8, 10);
  const uint32_t B = 1024;
  uint32_t up = 8;
  auto check_step = [&](const std::vector<uint16_t>& was, uint32_t m, bool going_up, uint32_t moved) {
    const std::vector<uint16_t> is = owners(t);
    uint32_t changed = 0;
    for (uint32_t b = 0; b < B; ++b) {
      if (is[b] == was[b]) continue;
      ++changed;
      if (going_up) {
        EXPECT_EQ(is[b], m);
      } else {
        EXPECT_EQ(was[b], m);
      }
    }
    EXPECT_EQ(changed, moved);
    if (going_up) {
      EXPECT_EQ(moved, B / up);  // floor(B / U), U counting m
    }
    expect_balanced(t);
  };
  for (uint32_t m : {1u, 5u, 6u, 0u}) {
    const std::vector<uint16_t> was = owners(t);
    const uint32_t had = t.count(m);
    const uint32_t moved = t.down(m);
    --up;
    EXPECT_EQ(moved, had);
    check_step(was, m, false, moved);
  }
  for (uint32_t m : {6u, 0u, 1u, 5u}) {
    const std::vector<uint16_t> was = owners(t);
    ++up;
    check_step(was, m, true, t.up(m));
  }
  EXPECT_EQ(t.members_up(), 8u);
}

TEST(BucketTable, AllDownThenOneUp) {
  Config c;
  c.selection = Selection::table;
  c.table_bits = 4;
  Unit u(c, {{7, 9}});
  EXPECT_GT(u.set_member_up(0, 0, false), 0u);
  EXPECT_GT(u.set_member_up(0, 1, false), 0u);
  EXPECT_EQ(u.pick(0, Key{}), Unit::kNone);
  EXPECT_EQ(u.table(0)->members_up(), 0u);
  EXPECT_EQ(u.set_member_up(0, 1, true), 16u);  // the only one: every bucket
  std::mt19937 rng(22);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(u.pick(0, random_key(rng)), 9u);
}

TEST(BucketTable, ModuloRehashesMostFlowsForContrast) {
  // Modulo over the members up: with one of 8 down, a key keeps its member
  // only when h mod 7 lands on the same member as h mod 8 did: most move.
  std::mt19937 rng(23);
  Config c;
  c.function = Function::crc32_lo;
  Unit u(c, {{0, 1, 2, 3, 4, 5, 6, 7}});
  std::vector<Key> keys;
  std::vector<uint32_t> before;
  for (int i = 0; i < 5000; ++i) {
    keys.push_back(random_key(rng));
    before.push_back(u.pick(0, keys.back()));
  }
  EXPECT_EQ(u.set_member_up(0, 3, false), 1u);
  int moved = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t now = u.pick(0, keys[i]);
    EXPECT_NE(now, 3u);
    moved += now != before[i];
  }
  EXPECT_GT(moved, 2500);
  EXPECT_EQ(u.set_member_up(0, 3, true), 1u);
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(u.pick(0, keys[i]), before[i]);
}

TEST(BucketTable, SingleMemberGroupsAreNotHashed) {
  Config c;
  c.selection = Selection::table;
  Unit u(c, {{5}, {1, 2}});
  EXPECT_EQ(u.table(0), nullptr);
  ASSERT_NE(u.table(1), nullptr);
  EXPECT_EQ(u.pick(0, Key{}), 5u);
  u.set_member_up(0, 0, false);
  EXPECT_EQ(u.pick(0, Key{}), Unit::kNone);
}
