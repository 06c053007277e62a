// The fixture and records the Xapian lexical index's tests share
// (xapian_index_test.cc, xapian_index_files_test.cc,
// xapian_index_episodes_test.cc): a scratch directory, a record, a query,
// and an index opened in the scratch directory.
#ifndef MSP_INDEX_LEXICAL_XAPIAN_INDEX_TEST_UTIL_H_
#define MSP_INDEX_LEXICAL_XAPIAN_INDEX_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "index/index.h"

namespace msp {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("MSP_TEST_TMP");
    std::string root = base && *base ? base : "/tmp";
    std::filesystem::create_directories(root);
    std::string tmpl = root + "/xapian_index_test.XXXXXX";
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Memory Rec(const std::string& id, const std::string& text) {
  Memory m;
  m.id = id;
  m.text = text;
  m.ns.tenant = "t1";
  m.ns.user = "ann";
  m.source = "user";
  m.created_at = 1000;
  return m;
}

inline IndexQuery Query(const std::string& text, const std::string& tenant = "t1") {
  IndexQuery q;
  q.scope.tenant = tenant;
  q.text = text;
  q.now = 5000;
  q.limit = 50;
  return q;
}

class XapianIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto idx = OpenLexicalIndex(dir_.path() + "/lexical", RetrievalOptions{});
    ASSERT_TRUE(idx.ok()) << idx.status().ToString();
    index_ = std::move(idx).value();
  }

  std::vector<std::string> Ids(const IndexQuery& q) {
    auto hits = index_->Search(q);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::string> ids;
    if (hits.ok()) {
      for (const auto& h : *hits) ids.push_back(h.id);
    }
    return ids;
  }

  std::set<std::string> IdSet(const IndexQuery& q) {
    auto v = Ids(q);
    return {v.begin(), v.end()};
  }

  void Put(const std::vector<Memory>& records, int64_t seq) {
    ASSERT_TRUE(index_->Apply(records, {}, seq).ok());
  }

  TempDir dir_;
  std::unique_ptr<LexicalIndex> index_;
};

}  // namespace msp

#endif  // MSP_INDEX_LEXICAL_XAPIAN_INDEX_TEST_UTIL_H_
