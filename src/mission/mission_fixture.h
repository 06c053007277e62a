// The fixture of the mission tests over a real engine (mission_test.cc,
// adr_import_test.cc): a SQLite-backed MemoryLayer in a temp directory with
// a fake clock, scope {acme, mars}, and helpers to make decisions and
// operators. Test-only.
#ifndef MSP_MISSION_MISSION_FIXTURE_H_
#define MSP_MISSION_MISSION_FIXTURE_H_

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {

class MissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    clock_ = std::make_shared<testing::FakeClock>(*ParseIso8601("2026-01-01T09:00:00Z"));
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.actor = "tester";
    auto e = MemoryLayer::Open(options_, clock_);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    scope_.tenant = "acme";
    scope_.mission = "mars";
  }

  std::unique_ptr<MemoryLayer> OpenAnother() {
    auto e = MemoryLayer::Open(options_, clock_);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  Decision NewDecision(const std::string& title, const std::string& component = "nav") {
    Decision d;
    d.title = title;
    d.context = "Context of " + title + ".";
    d.decision = "We do " + title + ".";
    d.alternatives = {{"do nothing", "the risk stays"}};
    d.component = component;
    d.decided_by = "ann";
    return d;
  }

  Decision Add(const Decision& d) {
    auto r = AddDecision(*engine_, scope_, d, "ann");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Decision{};
  }

  void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }

  static Asker Admin() { return Asker{"", kMaxAccessLevel}; }

  static OperatorRecord Op(const std::string& id, int clearance, const std::string& name) {
    OperatorRecord op;
    op.operator_id = id;
    op.clearance = clearance;
    op.name = name;
    return op;
  }

  testing::TempDir dir_{"mission"};
  std::shared_ptr<testing::FakeClock> clock_;
  Options options_;
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
};

}  // namespace msp

#endif  // MSP_MISSION_MISSION_FIXTURE_H_
