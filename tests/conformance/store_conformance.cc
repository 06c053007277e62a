// The Store conformance suite's fixture (see store_conformance.h) and the
// helpers its tests share (store_conformance_util.h). The tests, by topic:
// store_conformance_records.cc (round trips, deletes, GetMany and Scan, long
// records), store_conformance_changes.cc (the change sequence,
// compare-and-swap, several handles), store_conformance_list.cc (List and
// Count) and store_conformance_bookkeeping.cc (access statistics, audit,
// meta, idempotency keys).
#include "tests/conformance/store_conformance.h"
#include "tests/conformance/store_conformance_util.h"
#include "tests/support/test_util.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace msp::conformance {

void StoreConformanceTest::SetUp() {
  dir_ = ::msp::testing::MakeTestDir("msp-store");
  ASSERT_FALSE(dir_.empty()) << "cannot make a scratch directory";
  auto opened = GetParam().open(dir_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store_ = std::move(opened).value();
}

void StoreConformanceTest::TearDown() {
  store_.reset();
  ::msp::testing::RemoveTestDir(dir_);
}

Memory Rec(const std::string& id, TimeMs created_at, Kind kind, const std::string& tenant) {
  Memory m;
  m.id = id;
  m.ns.tenant = tenant;
  m.kind = kind;
  m.layer = DefaultLayer(kind);
  m.text = "text of " + id;
  m.created_at = created_at;
  m.updated_at = created_at;
  return m;
}

WriteBatch Puts(std::vector<Memory> records) {
  WriteBatch b;
  b.puts = std::move(records);
  return b;
}

WriteBatch Deletes(std::vector<std::string> ids) {
  WriteBatch b;
  b.deletes = std::move(ids);
  return b;
}

std::vector<std::string> Ids(const std::vector<Memory>& records) {
  std::vector<std::string> ids;
  for (const Memory& m : records) ids.push_back(m.id);
  return ids;
}

Memory FullRecord(const std::string& id) {
  Memory m;
  m.id = id;
  m.ns = Namespace{"tenant-ä", "ann", "agent-7", "sess-1", "mission-x", "op-9"};
  m.layer = Layer::kPractitioner;
  m.kind = Kind::kCorrection;
  m.text = "Zürich → 東京 🚀 \"quoted\" and 'single' \\ back\nnew line\ttab";
  m.body_json = R"({"class":"naming","nested":{"a":[1,2,3]},"s":"ünï"})";
  for (int i = 0; i < 60; ++i) m.tags.push_back("tag-" + std::to_string(i));
  m.tags.push_back("ünïcode-tag 🏷");
  m.tags.push_back("");
  m.source = "consolidation";
  m.sensitivity = Sensitivity::kMedium;
  m.criticality = Criticality::kCritical;
  m.confidence = 0.123456789012345;
  m.created_at = 1764496800123;
  m.updated_at = 1764496800999;
  m.expires_at = 1796032800000;
  m.valid_at = 1700000000000;
  m.invalid_at = 1800000000000;
  m.access_count = 42;
  m.last_accessed = 1764496801000;
  m.provenance = {{"episode", "0190-abc", ""},
                  {"commit", "deadbeef", "src/main.cc:10"},
                  {"url", "https://example.com/ü?q=1&r=2", "section 3"}};
  m.state = RecordState::kSuperseded;
  m.supersedes = "older-id";
  m.superseded_by = "newer-id";
  m.step_number = 17;
  m.access_level = 7;
  for (int i = 0; i < 384; ++i) {
    m.embedding.push_back(std::sin(static_cast<float>(i)) * (i % 2 == 0 ? 1.0f : -1e-30f));
  }
  m.embedding.push_back(3.4e38f);
  m.embedder_id = "hashing-384";
  return m;
}

}  // namespace msp::conformance
