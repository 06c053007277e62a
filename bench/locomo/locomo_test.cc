// Tests of the LoCoMo evaluation's parts: date parsing, evidence
// normalisation, turn formatting, loading, BM25 and recall counting.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "bm25.h"
#include "dataset.h"
#include "metrics.h"

namespace msp::locomo {
namespace {

TEST(ParseSessionDate, ReadsLocomoDates) {
  // 2023-05-08T13:56:00Z
  Result<TimeMs> t = ParseSessionDate("1:56 pm on 8 May, 2023");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, 1683554160000LL);
  // Midnight and noon: 12 am is hour 0, 12 pm is hour 12.
  Result<TimeMs> midnight = ParseSessionDate("12:00 am on 1 January, 2024");
  Result<TimeMs> noon = ParseSessionDate("12:00 pm on 1 January, 2024");
  ASSERT_TRUE(midnight.ok() && noon.ok());
  EXPECT_EQ(*midnight, 1704067200000LL);
  EXPECT_EQ(*noon - *midnight, 12LL * 3600 * 1000);
  // A leap day exists in 2024.
  EXPECT_TRUE(ParseSessionDate("9:00 am on 29 February, 2024").ok());
}

TEST(ParseSessionDate, RejectsWhatIsNotADate) {
  for (const char* bad : {"", "1:56 pm 8 May, 2023", "13:00 pm on 8 May, 2023", "1:5 pm on 8 May, 2023",
                          "1:56 xm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", "1:56 pm on 32 May, 2023",
                          "1:56 pm on 29 February, 2023", "1:56 pm on 8 May 2023"}) {
    Result<TimeMs> t = ParseSessionDate(bad);
    EXPECT_FALSE(t.ok()) << bad;
    EXPECT_TRUE(t.status().IsInvalidArgument()) << bad;
  }
}

TEST(SplitEvidence, NormalisesTheMalformedStrings) {
  EXPECT_EQ(SplitEvidence("D1:3"), (std::vector<std::string>{"D1:3"}));
  EXPECT_EQ(SplitEvidence("D8:6; D9:17"), (std::vector<std::string>{"D8:6", "D9:17"}));
  EXPECT_EQ(SplitEvidence("D9:1 D4:4  D4:6"), (std::vector<std::string>{"D9:1", "D4:4", "D4:6"}));
  EXPECT_EQ(SplitEvidence("D1:2,D1:3"), (std::vector<std::string>{"D1:2", "D1:3"}));
  EXPECT_EQ(SplitEvidence("D:11:26"), (std::vector<std::string>{"D11:26"}));
  EXPECT_EQ(SplitEvidence("D30:05"), (std::vector<std::string>{"D30:5"}));
  EXPECT_EQ(SplitEvidence("D030:0"), (std::vector<std::string>{"D30:0"}));
  // What cannot be read comes back as it was, to be dropped by the loader.
  EXPECT_EQ(SplitEvidence("D"), (std::vector<std::string>{"D"}));
  EXPECT_EQ(SplitEvidence("X1:2"), (std::vector<std::string>{"X1:2"}));
  EXPECT_TRUE(SplitEvidence(" ; ").empty());
}

TEST(FormatTurn, WritesEachFormat) {
  Turn t;
  t.speaker = "Mel";
  t.raw_text = "Look at this!";
  t.caption = "a photo of a dog";
  const std::string date = "1:56 pm on 8 May, 2023";
  EXPECT_EQ(FormatTurn(t, date, TurnFormat::kSpeaker, true), "Mel: Look at this! [image: a photo of a dog]");
  EXPECT_EQ(FormatTurn(t, date, TurnFormat::kPlain, true), "Look at this! [image: a photo of a dog]");
  EXPECT_EQ(FormatTurn(t, date, TurnFormat::kDated, false), "[1:56 pm on 8 May, 2023] Mel: Look at this!");
  t.caption.clear();
  EXPECT_EQ(FormatTurn(t, date, TurnFormat::kSpeaker, true), "Mel: Look at this!");
}

class LoadDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* root = std::getenv("MSP_TEST_TMP");
    std::filesystem::path base = root ? root : std::filesystem::temp_directory_path().string();
    std::filesystem::create_directories(base);
    std::string tmpl = (base / "locomo-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = dir_ + "/locomo.json";
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

constexpr char kTiny[] = R"([{
  "sample_id": "conv-1",
  "conversation": {
    "speaker_a": "Ann", "speaker_b": "Bob",
    "session_2_date_time": "9:00 am on 2 May, 2023",
    "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Back from Paris."}],
    "session_1_date_time": "1:56 pm on 1 May, 2023",
    "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob"},
                  {"speaker": "Bob", "dia_id": "D1:2", "text": "Hi! See my dog",
                   "img_url": ["x"], "blip_caption": "a brown dog", "query": "dog"}],
    "session_3_date_time": "9:00 am on 3 May, 2023"
  },
  "qa": [
    {"question": "Where was Bob?", "answer": "Paris", "evidence": ["D2:01"], "category": 4},
    {"question": "Who has a dog?", "answer": "Bob", "evidence": ["D1:2; D:1:1", "D9:9"], "category": 1},
    {"question": "What colour?", "answer": "brown", "evidence": [], "category": 3},
    {"question": "Why?", "adversarial_answer": "x", "evidence": ["D7:1"], "category": 5}
  ]
}])";

TEST_F(LoadDatasetTest, LoadsSessionsTurnsAndNormalisedQuestions) {
  Result<Dataset> d = LoadDataset(Write(kTiny), TurnFormat::kSpeaker, true, 0);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->conversations.size(), 1u);
  const Conversation& c = d->conversations[0];
  EXPECT_EQ(c.sample_id, "conv-1");
  // Sessions by number; session_3 has a date but no turns and is left out.
  ASSERT_EQ(c.sessions.size(), 2u);
  EXPECT_EQ(c.sessions[0].number, 1);
  EXPECT_EQ(c.sessions[1].number, 2);
  EXPECT_EQ(c.sessions[0].timestamp, *ParseSessionDate("1:56 pm on 1 May, 2023"));
  ASSERT_EQ(c.turns.size(), 3u);
  EXPECT_EQ(c.turns[1].dia_id, "D1:2");
  EXPECT_EQ(c.turns[1].index, 2);
  EXPECT_EQ(c.turns[1].text, "Bob: Hi! See my dog [image: a brown dog]");
  EXPECT_EQ(c.turns[2].dia_id, "D2:1");
  // Two questions keep evidence; one has none, one has none that resolves.
  ASSERT_EQ(c.questions.size(), 2u);
  EXPECT_EQ(c.questions[0].evidence, (std::vector<std::string>{"D2:1"}));
  EXPECT_EQ(c.questions[1].evidence, (std::vector<std::string>{"D1:2", "D1:1"}));
  EXPECT_EQ(c.questions[1].category, 1);
  const EvidenceReport& r = d->evidence;
  EXPECT_EQ(r.questions, 4);
  EXPECT_EQ(r.without_evidence, 1);
  EXPECT_EQ(r.all_evidence_dropped, 1);
  EXPECT_EQ(r.evidence_strings, 4);
  EXPECT_EQ(r.strings_normalised, 2);  // "D2:01" and "D1:2; D:1:1"
  EXPECT_EQ(r.ids_dropped, 2);         // D9:9 and D7:1
}

TEST_F(LoadDatasetTest, LimitAndBadInput) {
  EXPECT_TRUE(LoadDataset(dir_ + "/missing.json", TurnFormat::kSpeaker, true, 0).status().IsNotFound());
  EXPECT_TRUE(LoadDataset(Write("{\"a\": 1}"), TurnFormat::kSpeaker, true, 0).status().IsInvalidArgument());
  EXPECT_TRUE(LoadDataset(Write("[{\"sample_id\": 3}]"), TurnFormat::kSpeaker, true, 0)
                  .status()
                  .IsInvalidArgument());
  const std::string two = "[" + std::string(kTiny + 1, sizeof kTiny - 3) + "," +
                          std::string(kTiny + 1, sizeof kTiny - 3) + "]";
  Result<Dataset> all = LoadDataset(Write(two), TurnFormat::kSpeaker, true, 0);
  Result<Dataset> one = LoadDataset(Write(two), TurnFormat::kSpeaker, true, 1);
  ASSERT_TRUE(all.ok() && one.ok()) << all.status().ToString();
  EXPECT_EQ(all->conversations.size(), 2u);
  EXPECT_EQ(one->conversations.size(), 1u);
}

TEST(Bm25, Tokens) {
  EXPECT_EQ(Bm25Tokens("Hi, Mel! It's 2023..."),
            (std::vector<std::string>{"hi", "mel", "it", "s", "2023"}));
  EXPECT_TRUE(Bm25Tokens(" ,.! ").empty());
}

TEST(Bm25, RanksByOkapiWeight) {
  Bm25Index index;
  index.Add("the cat sat on the mat");
  index.Add("a dog and a cat");
  index.Add("dogs are not cats");
  index.Add("the dog barked at the dog next door");
  // "dog" occurs in docs 1 and 3 only ("dogs" is another token).
  EXPECT_EQ(index.Search("dog", 10), (std::vector<size_t>{3, 1}));
  // "cat" in docs 0 and 1; doc 1 is shorter, so it comes first.
  EXPECT_EQ(index.Search("cat", 10), (std::vector<size_t>{1, 0}));
  EXPECT_EQ(index.Search("cat", 1), (std::vector<size_t>{1}));
  // Both terms: doc 1 has both.
  EXPECT_EQ(index.Search("Dog CAT", 10).front(), 1u);
  EXPECT_TRUE(index.Search("zebra", 10).empty());
}

TEST(Bm25, EqualScoresKeepDocumentOrder) {
  Bm25Index index;
  index.Add("red apple");
  index.Add("green apple");
  index.Add("blue apple");
  EXPECT_EQ(index.Search("apple", 10), (std::vector<size_t>{0, 1, 2}));
}

TEST_F(LoadDatasetTest, JoinTurnsMakesPassagesAndMapsEvidence) {
  Result<Dataset> d = LoadDataset(Write(kTiny), TurnFormat::kSpeaker, true, 0);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  JoinTurns(&*d, 2);
  const Conversation& c = d->conversations[0];
  // Session 1's two turns are one passage, session 2's one turn another.
  ASSERT_EQ(c.turns.size(), 2u);
  EXPECT_EQ(c.turns[0].dia_id, "D1:1");
  EXPECT_EQ(c.turns[0].index, 1);
  EXPECT_EQ(c.turns[0].text, "Ann: Hi Bob\nBob: Hi! See my dog [image: a brown dog]");
  EXPECT_EQ(c.turns[1].dia_id, "D2:1");
  EXPECT_EQ(c.turns[1].text, "Bob: Back from Paris.");
  EXPECT_EQ(c.sessions[0].turns, (std::vector<size_t>{0}));
  EXPECT_EQ(c.sessions[1].turns, (std::vector<size_t>{1}));
  EXPECT_EQ(c.turn_by_id.at("D2:1"), 1u);
  EXPECT_FALSE(c.turn_by_id.count("D1:2"));
  // D1:2 and D1:1 lie in one passage: one evidence id left.
  EXPECT_EQ(c.questions[1].evidence, (std::vector<std::string>{"D1:1"}));
  EXPECT_EQ(c.questions[0].evidence, (std::vector<std::string>{"D2:1"}));
}

TEST(Metrics, DistinctSessionsInOrderOfFirstAppearance) {
  EXPECT_EQ(DistinctSessions({"D3:1", "D1:4", "D3:2", "D2:1", "D1:1"}),
            (std::vector<std::string>{"D3", "D1", "D2"}));
}

TEST(Metrics, AnyAndAllInTop) {
  const std::vector<std::string> ranked = {"a", "b", "c", "d"};
  EXPECT_TRUE(AnyInTop(ranked, 1, {"a", "z"}));
  EXPECT_FALSE(AllInTop(ranked, 1, {"a", "b"}));
  EXPECT_TRUE(AllInTop(ranked, 2, {"b", "a"}));
  EXPECT_FALSE(AnyInTop(ranked, 2, {"c"}));
  EXPECT_TRUE(AnyInTop(ranked, 20, {"d"}));  // k beyond the ranking
}

TEST(Metrics, ScoreboardCountsTurnsAndSessions) {
  Scoreboard board("t", "test", /*turn_level=*/true);
  // Evidence in two sessions; the second evidence turn is at rank 3, its
  // session is the second distinct session.
  board.AddTurnRanking(1, {"D1:1", "D2:5"}, {"D1:1", "D1:2", "D2:5"}, 30, 2.0);
  // Nothing found.
  board.AddTurnRanking(4, {"D3:3"}, {"D1:1"}, 10, 4.0);
  const RowCounts& all = board.row(0);
  EXPECT_EQ(all.questions, 2);
  // k = 1: question 1 has one of two turns (any, not all).
  EXPECT_EQ(all.turn_any[0], 1);
  EXPECT_EQ(all.turn_all[0], 0);
  // k = 5: question 1 has both turns.
  EXPECT_EQ(all.turn_all[1], 1);
  // Sessions: at k = 1 only D1; D2 is the second distinct session.
  EXPECT_EQ(all.session_any[0], 1);
  EXPECT_EQ(all.session_all[0], 0);
  EXPECT_EQ(all.session_all[1], 1);
  EXPECT_EQ(board.row(1).questions, 1);
  EXPECT_EQ(board.row(4).questions, 1);
  EXPECT_EQ(board.row(4).turn_any[3], 0);
  EXPECT_DOUBLE_EQ(all.tokens_at_10, 40);
  EXPECT_DOUBLE_EQ(board.MeanLatencyMs(), 3.0);
  const nlohmann::json j = board.ToJson();
  EXPECT_DOUBLE_EQ(j["categories"]["overall"]["turn"]["recall_any"]["1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["categories"]["multi-hop"]["session"]["recall_all"]["5"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["categories"]["overall"]["tokens_at_10"].get<double>(), 20.0);
  // Distinct sessions among the first 10: 2 (D1, D2) and 1 (D1).
  EXPECT_DOUBLE_EQ(all.sessions_at_10, 3);
  EXPECT_DOUBLE_EQ(j["categories"]["overall"]["distinct_sessions_at_10"].get<double>(), 1.5);
  EXPECT_NE(board.Table().find("overall"), std::string::npos);
}

TEST(Metrics, SessionScoreboard) {
  Scoreboard board("s", "sessions", /*turn_level=*/false);
  board.AddSessionRanking(2, {"D4:1", "D5:2"}, {"D5", "D9", "D4"}, 1.0);
  EXPECT_EQ(board.row(2).session_any[0], 1);
  EXPECT_EQ(board.row(2).session_all[0], 0);
  EXPECT_EQ(board.row(2).session_all[1], 1);
  EXPECT_FALSE(board.ToJson()["categories"]["overall"].contains("turn"));
}

}  // namespace
}  // namespace msp::locomo
