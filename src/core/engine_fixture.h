// The fixture of the engine tests (engine_test.cc, engine_admin_test.cc):
// a MemoryLayer over the real parts (SQLite store, Xapian index, exact vector
// index, hashing embedder, rule-based extractor) in a temp directory with a
// fake clock, and helpers to write and search. Test-only.
#ifndef MSP_CORE_ENGINE_FIXTURE_H_
#define MSP_CORE_ENGINE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("engine");
    ASSERT_FALSE(dir_.empty());
    clock_ = std::make_shared<testing::FakeClock>(*ParseIso8601("2026-01-01T09:00:00Z"));
    options_.store.data_dir = dir_ + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.every_n_episodes = 4;
    options_.actor = "tester";
    // Most tests check the relative scale's values (the fusion's
    // arithmetic); the calibrated default has tests of its own.
    options_.retrieval.scores = "relative";
    engine_ = Open(options_);
  }
  void TearDown() override {
    engine_.reset();
    testing::RemoveTestDir(dir_);
  }

  std::unique_ptr<MemoryLayer> Open(const Options& o) {
    auto r = MemoryLayer::Open(o, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  Namespace Ns(const std::string& tenant = "acme", const std::string& user = "ann") {
    Namespace ns;
    ns.tenant = tenant;
    ns.user = user;
    return ns;
  }

  WriteRequest Req(const std::string& text, const Namespace& ns) {
    WriteRequest r;
    r.ns = ns;
    r.text = text;
    r.tags = {"preference"};
    return r;
  }

  std::vector<SearchHit> Search(MemoryLayer& e, const Namespace& scope, const std::string& q, int k = 5) {
    RetrieveRequest r;
    r.scope = scope;
    r.query = q;
    r.top_k = k;
    auto hits = e.Retrieve(r);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    return hits.ok() ? *hits : std::vector<SearchHit>{};
  }

  std::string dir_;
  std::shared_ptr<testing::FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
};

}  // namespace msp

#endif  // MSP_CORE_ENGINE_FIXTURE_H_
