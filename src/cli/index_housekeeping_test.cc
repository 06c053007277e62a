// Tests for the long-lived commands' index housekeeping: with it running,
// the access bookkeeping of a search reaches the store without another
// search or write to carry it, and the warmed vector index answers as the
// store says.
#include "cli/index_housekeeping.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "msp/memory.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

class IndexHousekeepingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("housekeeping");
    ASSERT_FALSE(dir_.empty());
    options_.store.data_dir = dir_ + "/data";
    options_.store.synchronous = "normal";
  }
  void TearDown() override { testing::RemoveTestDir(dir_); }

  std::unique_ptr<MemoryLayer> Open() {
    auto m = MemoryLayer::Open(options_);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? std::move(m).value() : nullptr;
  }
  static Namespace Ns() {
    Namespace ns;
    ns.tenant = "acme";
    ns.user = "ann";
    return ns;
  }

  std::string dir_;
  Options options_;
};

TEST_F(IndexHousekeepingTest, WritesTheAccessBookkeepingOfRequestsOnItsOwn) {
  std::string first_id;
  {  // the store and its vector file, as a command leaves them
    auto writer = Open();
    ASSERT_NE(writer, nullptr);
    for (const char* text : {"Ann prefers dark roast coffee in the morning", "Ann is allergic to peanuts",
                             "Ann plays the cello on Sundays"}) {
      WriteRequest w;
      w.ns = Ns();
      w.text = text;
      w.tags = {"note"};
      auto written = writer->Write(w);
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      if (first_id.empty()) first_id = written->id;
    }
  }
  auto server = Open();
  auto other = Open();  // another process's view of the store
  ASSERT_NE(server, nullptr);
  ASSERT_NE(other, nullptr);
  std::ostringstream err;
  IndexHousekeeping housekeeping(*server, err, std::chrono::milliseconds(60000));
  RetrieveRequest r;
  r.scope = Ns();
  r.query = "what coffee does Ann like";
  r.top_k = 1;
  auto hits = server->Retrieve(r);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].memory.id, first_id);
  // No other request comes to write the bump: the housekeeping does, within
  // a few of its rounds (the deadline only bounds a failing test).
  int64_t seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto got = other->Get(Ns(), first_id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    seen = got->access_count;
    if (seen == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(seen, 1);
  housekeeping.Stop();
  EXPECT_EQ(err.str(), "");  // no warnings
  // The warmed index answers as before.
  auto again = server->Retrieve(r);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].memory.id, first_id);
}

}  // namespace
}  // namespace msp
