// Core memory blocks: defaults, limits (refused, never truncated), append /
// replace, concurrent edits, isolation between agents.
#include "agent/core_memory.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_util.h"

namespace msp {
namespace {

class CoreMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options o;
    o.store.data_dir = dir_.path() + "/data";
    o.store.synchronous = "normal";
    auto e = MemoryLayer::Open(o);
    ASSERT_OK(e.status());
    engine_ = std::move(e).value();
    scope_.tenant = "acme";
    scope_.user = "ann";
    scope_.agent = "helper";
  }
  testing::TempDir dir_{"core-memory"};
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
};

TEST_F(CoreMemoryTest, DefaultBlocksExistEmpty) {
  CoreMemory core(*engine_, scope_, 100);
  ASSERT_OK_AND_ASSIGN(auto blocks, core.Blocks());
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].label, "persona");
  EXPECT_EQ(blocks[1].label, "user");
  EXPECT_EQ(blocks[2].label, "task");
  for (const auto& b : blocks) {
    EXPECT_TRUE(b.value.empty());
    EXPECT_EQ(b.limit, 100u);
  }
  EXPECT_TRUE(core.Get("nope").status().IsNotFound());
  EXPECT_TRUE(core.Append("nope", "x", "t").status().IsNotFound()) << "the agent cannot create blocks";
  EXPECT_TRUE(core.Get("Bad Label").status().IsInvalidArgument());
}

TEST_F(CoreMemoryTest, AppendAndReplace) {
  CoreMemory core(*engine_, scope_, 100);
  ASSERT_OK(core.Append("user", "Name: Ann", "agent").status());
  ASSERT_OK_AND_ASSIGN(CoreBlock b, core.Append("user", "Uses Windows 11", "agent"));
  EXPECT_EQ(b.value, "Name: Ann\nUses Windows 11");
  ASSERT_OK_AND_ASSIGN(b, core.Replace("user", "Windows 11", "Linux", "agent"));
  EXPECT_EQ(b.value, "Name: Ann\nUses Linux");
  ASSERT_OK_AND_ASSIGN(b, core.Replace("user", "\nUses Linux", "", "agent"));
  EXPECT_EQ(b.value, "Name: Ann");
  auto missing = core.Replace("user", "macOS", "x", "agent");
  EXPECT_TRUE(missing.status().IsInvalidArgument());
  EXPECT_NE(missing.status().message().find("does not contain"), std::string::npos);
  // Persisted: another CoreMemory sees it.
  CoreMemory again(*engine_, scope_, 100);
  ASSERT_OK_AND_ASSIGN(CoreBlock read, again.Get("user"));
  EXPECT_EQ(read.value, "Name: Ann");
  // Another agent does not.
  Namespace other = scope_;
  other.agent = "other";
  CoreMemory theirs(*engine_, other, 100);
  ASSERT_OK_AND_ASSIGN(CoreBlock empty, theirs.Get("user"));
  EXPECT_TRUE(empty.value.empty());
}

TEST_F(CoreMemoryTest, EditsPastTheLimitAreRefusedWithTheLimit) {
  CoreMemory core(*engine_, scope_, 20);
  ASSERT_OK(core.Set("persona", "I am Sam, helpful.", std::nullopt, "admin").status());  // 18 characters
  auto over = core.Append("persona", "Very", "agent");
  ASSERT_TRUE(over.status().IsInvalidArgument());
  EXPECT_NE(over.status().message().find("limit of 20"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find("23 characters"), std::string::npos) << over.status().message();
  auto grow = core.Replace("persona", "Sam", "Samantha the Great", "agent");
  EXPECT_TRUE(grow.status().IsInvalidArgument());
  ASSERT_OK_AND_ASSIGN(CoreBlock b, core.Get("persona"));
  EXPECT_EQ(b.value, "I am Sam, helpful.") << "nothing was truncated or changed";
  // Characters, not bytes: 20 Cyrillic letters fit a limit of 20.
  ASSERT_OK(core.Set("task", "", 20, "admin").status());
  ASSERT_OK(core.Append("task", "ЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖЖ", "agent").status());
  EXPECT_TRUE(core.Append("task", "Ж", "agent").status().IsInvalidArgument());
  // A new block needs Set, with its own limit.
  ASSERT_OK_AND_ASSIGN(CoreBlock custom, core.Set("project", "msp", 50, "admin"));
  EXPECT_EQ(custom.limit, 50u);
  ASSERT_OK_AND_ASSIGN(auto blocks, core.Blocks());
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[3].label, "project");
  EXPECT_TRUE(core.Set("user", std::string(21, 'x'), std::nullopt, "admin").status().IsInvalidArgument());
}

TEST_F(CoreMemoryTest, ConcurrentAppendsAreAllKept) {
  CoreMemory core(*engine_, scope_, 10000);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) {
        if (!core.Append("task", "t" + std::to_string(t) + "-" + std::to_string(k), "agent").ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_OK_AND_ASSIGN(CoreBlock b, core.Get("task"));
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 5; ++k) {
      EXPECT_NE(b.value.find("t" + std::to_string(t) + "-" + std::to_string(k)), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace msp
