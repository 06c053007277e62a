// Tests for the long-lived commands' index housekeeping: with it running,
// the access bookkeeping of a search reaches the store without another
// search or write to carry it, and the warmed-up engine answers as before.
#include "cli/index_housekeeping.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "core/engine_fixture.h"

namespace msp {
namespace {

using IndexHousekeepingTest = EngineTest;

TEST_F(IndexHousekeepingTest, WritesTheAccessBookkeepingOfRequestsOnItsOwn) {
  auto coffee = engine_->Write(Req("Ann prefers dark roast coffee in the morning", Ns()));
  ASSERT_TRUE(coffee.ok()) << coffee.status().ToString();
  ASSERT_TRUE(engine_->Write(Req("Ann plays the cello on Sundays", Ns())).ok());
  auto other = Open(options_);  // another process's view of the store
  ASSERT_NE(other, nullptr);
  std::ostringstream err;
  IndexHousekeeping housekeeping(*engine_, err, std::chrono::milliseconds(60000));
  auto hits = Search(*engine_, Ns(), "what coffee does Ann like", 1);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].memory.id, coffee->id);
  // No other request comes to write the bump: the housekeeping does, within
  // a few of its rounds (the deadline only bounds a failing test).
  int64_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto got = other->Get(Ns(), coffee->id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    seen = got->access_count;
    if (seen == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(seen, 1);
  housekeeping.Stop();
  EXPECT_EQ(err.str(), "");  // no warnings
  // The warmed-up engine answers as before.
  auto again = Search(*engine_, Ns(), "what coffee does Ann like", 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].memory.id, coffee->id);
}

}  // namespace
}  // namespace msp
