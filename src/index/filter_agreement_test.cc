// MatchesQuery is the one definition of visibility. These tests pin it down
// case by case, then check that the Xapian filter and the vector index's
// compiled filter select exactly the records it selects, over random records
// and random queries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "index/index.h"

namespace msp {
namespace {

Memory Base() {
  Memory m;
  m.id = "r";
  m.ns.tenant = "t1";
  m.ns.user = "ann";
  m.ns.session = "s1";
  m.kind = Kind::kFact;
  m.layer = Layer::kSemantic;
  m.tags = {"a", "b"};
  m.source = "user";
  m.criticality = Criticality::kNormal;
  m.created_at = 100;
  return m;
}

IndexQuery BaseQuery() {
  IndexQuery q;
  q.scope.tenant = "t1";
  q.now = 1000;
  return q;
}

TEST(MatchesQueryTest, Scope) {
  const Memory m = Base();
  IndexQuery q = BaseQuery();
  EXPECT_TRUE(MatchesQuery(m, q));
  q.scope.tenant = "t2";
  EXPECT_FALSE(MatchesQuery(m, q));
  q.scope.tenant = "";
  EXPECT_FALSE(MatchesQuery(m, q));  // the tenant is always compared
  q = BaseQuery();
  q.scope.user = "ann";
  q.scope.session = "s1";
  EXPECT_TRUE(MatchesQuery(m, q));
  q.scope.agent = "bot";
  EXPECT_FALSE(MatchesQuery(m, q));  // the record has no agent
}

TEST(MatchesQueryTest, FilterLists) {
  const Memory m = Base();
  IndexQuery q = BaseQuery();
  q.filter.kinds = {Kind::kEpisode};
  EXPECT_FALSE(MatchesQuery(m, q));
  q.filter.kinds = {Kind::kEpisode, Kind::kFact};
  EXPECT_TRUE(MatchesQuery(m, q));
  q = BaseQuery();
  q.filter.layers = {Layer::kDomain};
  EXPECT_FALSE(MatchesQuery(m, q));
  q = BaseQuery();
  q.filter.tags = {"z", "b"};
  EXPECT_TRUE(MatchesQuery(m, q));
  q.filter.tags = {"z"};
  EXPECT_FALSE(MatchesQuery(m, q));
  q = BaseQuery();
  q.filter.sources = {"tool"};
  EXPECT_FALSE(MatchesQuery(m, q));
  q.filter.sources = {"tool", "user"};
  EXPECT_TRUE(MatchesQuery(m, q));
  q = BaseQuery();
  q.filter.criticalities = {Criticality::kHigh};
  EXPECT_FALSE(MatchesQuery(m, q));
}

TEST(MatchesQueryTest, TimeExpiryAndState) {
  Memory m = Base();
  IndexQuery q = BaseQuery();
  q.filter.created_from = 100;  // inclusive
  EXPECT_TRUE(MatchesQuery(m, q));
  q.filter.created_from = 101;
  EXPECT_FALSE(MatchesQuery(m, q));
  q = BaseQuery();
  q.filter.created_to = 100;  // exclusive
  EXPECT_FALSE(MatchesQuery(m, q));
  q.filter.created_to = 101;
  EXPECT_TRUE(MatchesQuery(m, q));

  q = BaseQuery();
  m.expires_at = 1000;  // == now
  EXPECT_FALSE(MatchesQuery(m, q));
  m.expires_at = 1001;
  EXPECT_TRUE(MatchesQuery(m, q));
  m.expires_at = -1;  // not a positive time: never expires
  EXPECT_TRUE(MatchesQuery(m, q));
  m.expires_at = 5;
  q.now = 0;  // now unset: nothing has expired
  EXPECT_TRUE(MatchesQuery(m, q));

  m = Base();
  q = BaseQuery();
  m.state = RecordState::kSuperseded;
  EXPECT_FALSE(MatchesQuery(m, q));
  q.filter.include_superseded = true;
  EXPECT_TRUE(MatchesQuery(m, q));
}

// ---- agreement over random records and queries ---------------------------

template <typename T>
const T& Pick(std::mt19937& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

bool Coin(std::mt19937& rng, double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

const std::vector<std::string> kParts = {"", "ann", "bob"};
const std::vector<std::string> kTags = {"a", "b", "c", "", "long-" + std::string(250, 'x')};
const std::vector<std::string> kSources = {"user", "tool", ""};
const std::vector<int64_t> kTimes = {0, -10, 100, 150, 200, 300};
const std::vector<Kind> kKinds = AllKinds();
const std::vector<Layer> kLayers = {Layer::kEpisodic, Layer::kSemantic, Layer::kProcedural,
                                    Layer::kDomain, Layer::kWorkflow, Layer::kPractitioner};
const std::vector<Criticality> kCrit = {Criticality::kLow, Criticality::kNormal, Criticality::kHigh,
                                        Criticality::kCritical};

Memory RandomRecord(std::mt19937& rng, int i, const std::vector<std::string>& tenants) {
  Memory m;
  m.id = "rec-" + std::to_string(i);
  m.text = "common text number " + std::to_string(i);
  m.ns.tenant = Pick(rng, tenants);
  m.ns.user = Pick(rng, kParts);
  m.ns.agent = Pick(rng, kParts);
  m.ns.session = Pick(rng, kParts);
  m.ns.mission = Pick(rng, kParts);
  m.ns.operator_id = Pick(rng, kParts);
  m.kind = Pick(rng, kKinds);
  m.layer = Pick(rng, kLayers);
  const int ntags = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int t = 0; t < ntags; ++t) m.tags.push_back(Pick(rng, kTags));
  m.source = Pick(rng, kSources);
  m.criticality = Pick(rng, kCrit);
  m.created_at = Pick(rng, kTimes);
  m.expires_at = Pick(rng, kTimes);
  m.state = Coin(rng, 0.3) ? RecordState::kSuperseded : RecordState::kActive;
  m.access_level = Coin(rng, 0.5) ? 0 : std::uniform_int_distribution<int>(0, kMaxAccessLevel)(rng);
  m.embedding = {0.5f, 0.5f, 0.5f, 0.5f};
  return m;
}

template <typename T>
std::vector<T> RandomSubset(std::mt19937& rng, const std::vector<T>& from) {
  std::vector<T> out;
  if (Coin(rng)) return out;  // often no filter at all
  for (const T& v : from) {
    if (Coin(rng, 0.35)) out.push_back(v);
  }
  return out;
}

IndexQuery RandomQuery(std::mt19937& rng) {
  IndexQuery q;
  const std::vector<std::string> tenants = {"t1", "t2", "", "t3"};
  const std::vector<std::string> parts = {"", "", "", "ann", "bob", "zed"};
  q.scope.tenant = Pick(rng, tenants);
  q.scope.user = Pick(rng, parts);
  q.scope.agent = Pick(rng, parts);
  q.scope.session = Pick(rng, parts);
  q.scope.mission = Pick(rng, parts);
  q.scope.operator_id = Pick(rng, parts);
  q.filter.kinds = RandomSubset(rng, kKinds);
  q.filter.layers = RandomSubset(rng, kLayers);
  std::vector<std::string> tags = kTags;
  tags.push_back("never-used");
  q.filter.tags = RandomSubset(rng, tags);
  q.filter.sources = RandomSubset(rng, kSources);
  q.filter.criticalities = RandomSubset(rng, kCrit);
  if (Coin(rng, 0.3)) q.filter.created_from = Pick(rng, kTimes);
  if (Coin(rng, 0.3)) q.filter.created_to = Pick(rng, kTimes);
  q.filter.include_superseded = Coin(rng, 0.3);
  if (Coin(rng, 0.4)) q.filter.max_access_level = std::uniform_int_distribution<int>(0, kMaxAccessLevel)(rng);
  q.now = Pick(rng, std::vector<int64_t>{0, -1, 100, 150, 250, 1000});
  q.text = "common";
  q.limit = 100000;
  return q;
}

std::string TempDirPath() {
  const char* base = std::getenv("MSP_TEST_TMP");
  std::string root = base && *base ? base : "/tmp";
  std::filesystem::create_directories(root);
  std::string tmpl = root + "/filter_agreement_test.XXXXXX";
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// The indexes skip filters every document passes (a single tenant), so the
// agreement is checked with several tenants and with one.
class FilterAgreementTest : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(FilterAgreementTest, IndexesSelectExactlyWhatMatchesQuerySelects) {
  std::mt19937 rng(20240607);
  std::vector<Memory> records;
  for (int i = 0; i < 400; ++i) records.push_back(RandomRecord(rng, i, GetParam()));

  const std::string dir = TempDirPath();
  {
    auto lexical_or = OpenLexicalIndex(dir + "/lexical", RetrievalOptions{});
    ASSERT_TRUE(lexical_or.ok()) << lexical_or.status().ToString();
    auto lexical = std::move(lexical_or).value();
    ASSERT_TRUE(lexical->Apply(records, {}, 1).ok());
    auto vector = MakeExactVectorIndex(4);
    ASSERT_TRUE(vector->Apply(records, {}, 1).ok());

    int nonempty = 0;
    for (int trial = 0; trial < 1000; ++trial) {
      const IndexQuery q = RandomQuery(rng);
      std::set<std::string> expect;
      for (const Memory& m : records) {
        if (MatchesQuery(m, q)) expect.insert(m.id);
      }
      if (!expect.empty()) ++nonempty;

      auto lex = lexical->Search(q);
      ASSERT_TRUE(lex.ok()) << lex.status().ToString();
      std::set<std::string> got_lex;
      for (const auto& h : *lex) got_lex.insert(h.id);
      EXPECT_EQ(got_lex, expect) << "lexical, trial " << trial;

      auto vec = vector->Search({1.0f, 1.0f, 1.0f, 1.0f}, q);
      ASSERT_TRUE(vec.ok()) << vec.status().ToString();
      std::set<std::string> got_vec;
      for (const auto& h : *vec) got_vec.insert(h.id);
      EXPECT_EQ(got_vec, expect) << "vector, trial " << trial;
    }
    // The random queries must exercise both outcomes to mean anything.
    EXPECT_GT(nonempty, 60);
    EXPECT_LT(nonempty, 1000);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

INSTANTIATE_TEST_SUITE_P(Tenants, FilterAgreementTest,
                         ::testing::Values(std::vector<std::string>{"t1", "t2", ""},
                                           std::vector<std::string>{"t1"}));

}  // namespace
}  // namespace msp
