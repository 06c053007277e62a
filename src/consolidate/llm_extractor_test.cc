// LlmExtractor against the scripted OpenAI stub: the extraction request and
// its parsing, the add / merge / supersede decisions, invalid replies, model
// failures, chunking, and the extractor factory.
#include "consolidate/llm_extractor.h"

#include <gtest/gtest.h>

#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using json = nlohmann::json;
using msp::testing::kChatPath;
using msp::testing::OpenAiStub;
using msp::testing::StubReply;

// Stored facts by exact candidate text.
class FakeFacts final : public FactLookup {
 public:
  std::map<std::string, std::vector<Memory>> by_text;
  std::vector<std::string> asked;
  Result<std::vector<Memory>> SimilarFacts(const std::string& text, int k) override {
    asked.push_back(text);
    EXPECT_GT(k, 0);
    auto it = by_text.find(text);
    return it == by_text.end() ? std::vector<Memory>{} : it->second;
  }
};

Memory Episode(int64_t step, const std::string& text, TimeMs at, const std::string& type = "user_message") {
  Memory m;
  m.id = "ep-" + std::to_string(step);
  m.kind = Kind::kEpisode;
  m.layer = Layer::kEpisodic;
  m.ns.user = "ann";
  m.ns.session = "s1";
  m.step_number = step;
  m.text = text;
  m.body_json = json{{"type", type}, {"content", {{"text", text}}}}.dump();
  m.created_at = at;
  return m;
}

Memory StoredFact(const std::string& id, const std::string& text) {
  Memory m;
  m.id = id;
  m.kind = Kind::kFact;
  m.text = text;
  m.valid_at = ParseIso8601("2025-01-10").value();
  return m;
}

std::unique_ptr<LlmExtractor> MakeExtractorFor(const OpenAiStub& stub, LlmExtractorOptions o = {}) {
  ChatOptions c;
  c.base_url = stub.base_url();
  c.model = "stub-model";
  c.max_retries = 1;
  c.initial_backoff_ms = 1;
  c.sleep = [](std::chrono::milliseconds) {};
  auto chat = ChatClient::Create(c);
  EXPECT_TRUE(chat.ok()) << chat.status().ToString();
  return std::make_unique<LlmExtractor>(std::move(chat).value(), o);
}

StubReply Facts(const json& facts) { return StubReply::ChatContent(json{{"facts", facts}}.dump()); }
StubReply Decisions(const json& decisions) {
  return StubReply::ChatContent(json{{"decisions", decisions}}.dump());
}

const TimeMs kT1 = ParseIso8601("2026-03-01T09:00").value();
const TimeMs kT2 = ParseIso8601("2026-03-01T09:05").value();

TEST(LlmExtractorTest, ExtractsFactsWithSourcesConfidenceTagsAndValidity) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, Facts(json::parse(R"([
    {"text": "User prefers Python for data analysis.", "confidence": 0.9, "tags": ["preference"],
     "steps": [1], "valid_from": ""},
    {"text": "User uses Ubuntu 22.04.", "confidence": 0.8, "tags": ["environment"], "steps": [2, 99],
     "valid_from": "2026-02-01"},
    {"text": "user uses ubuntu 22.04", "confidence": 0.6, "tags": ["profile"], "steps": [], "valid_from": ""}
  ])")));
  auto extractor = MakeExtractorFor(stub);
  Memory secret = Episode(3, "my password is hunter2", kT2);
  secret.sensitivity = Sensitivity::kHigh;
  std::vector<Memory> episodes = {Episode(2, "I run Ubuntu 22.04 since February", kT2),
                                  Episode(1, "I prefer Python for data work", kT1), secret,
                                  Episode(4, "Sure, here is how.", kT2, "agent_response")};
  FakeFacts facts;
  ASSERT_OK_AND_ASSIGN(auto candidates, extractor->ExtractWithFacts(episodes, facts));
  ASSERT_EQ(candidates.size(), 2u);  // the two Ubuntu facts are one
  EXPECT_EQ(candidates[0].text, "User prefers Python for data analysis.");
  EXPECT_DOUBLE_EQ(candidates[0].confidence, 0.9);
  EXPECT_EQ(candidates[0].tags, (std::vector<std::string>{"preference"}));
  EXPECT_EQ(candidates[0].source_episodes, (std::vector<std::string>{"ep-1"}));
  EXPECT_EQ(candidates[0].valid_at, kT1);  // the source episode's time
  EXPECT_EQ(candidates[0].action, FactAction::kAdd);

  EXPECT_EQ(candidates[1].text, "User uses Ubuntu 22.04.");
  EXPECT_DOUBLE_EQ(candidates[1].confidence, 0.8);
  // "environment" is not a stable tag: "profile" joins it.
  EXPECT_EQ(candidates[1].tags, (std::vector<std::string>{"environment", "profile"}));
  // Step 99 does not exist; the duplicate without steps brought every episode.
  EXPECT_EQ(candidates[1].source_episodes, (std::vector<std::string>{"ep-2", "ep-1", "ep-4"}));
  EXPECT_EQ(candidates[1].valid_at, ParseIso8601("2026-02-01").value());

  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 1u);  // no stored facts to compare with: no decide request
  const std::string transcript = sent[0].json["messages"][1]["content"];
  EXPECT_NE(transcript.find("[step 1 | 2026-03-01T09:00 | user_message] I prefer Python"), std::string::npos)
      << transcript;
  EXPECT_LT(transcript.find("[step 1 "), transcript.find("[step 2 "));  // in step order
  EXPECT_NE(transcript.find("agent_response] Sure"), std::string::npos);
  EXPECT_EQ(transcript.find("hunter2"), std::string::npos);  // high sensitivity never leaves
  EXPECT_EQ(sent[0].json["response_format"]["json_schema"]["name"], "facts");
  EXPECT_EQ(facts.asked.size(), 2u);
}

TEST(LlmExtractorTest, DecidesMergeAndSupersedeAgainstStoredFacts) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, Facts(json::parse(R"([
    {"text": "User lives in Berlin.", "confidence": 0.95, "tags": ["profile"], "steps": [1], "valid_from": ""},
    {"text": "User likes green tea.", "confidence": 0.9, "tags": ["preference"], "steps": [2], "valid_from": ""},
    {"text": "User has a cat.", "confidence": 0.9, "tags": ["profile"], "steps": [2], "valid_from": ""}
  ])")));
  stub.Enqueue(kChatPath, Decisions(json::parse(R"([
    {"candidate": 0, "action": "supersede", "target": "S1"},
    {"candidate": 1, "action": "merge", "target": "S2"},
    {"candidate": 1, "action": "add", "target": ""}
  ])")));
  auto extractor = MakeExtractorFor(stub);
  FakeFacts facts;
  facts.by_text["User lives in Berlin."] = {StoredFact("f-munich", "User lives in Munich.")};
  facts.by_text["User likes green tea."] = {StoredFact("f-tea", "User enjoys green tea."),
                                            StoredFact("f-munich", "User lives in Munich.")};
  ASSERT_OK_AND_ASSIGN(auto candidates,
                       extractor->ExtractWithFacts({Episode(1, "I moved to Berlin", kT1),
                                                    Episode(2, "green tea, and my cat", kT2)},
                                                   facts));
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].action, FactAction::kSupersede);
  EXPECT_EQ(candidates[0].target_id, "f-munich");
  EXPECT_EQ(candidates[1].action, FactAction::kMerge);  // the first decision for a fact counts
  EXPECT_EQ(candidates[1].target_id, "f-tea");
  EXPECT_EQ(candidates[2].action, FactAction::kAdd);    // no decision: add
  EXPECT_EQ(candidates[2].target_id, "");

  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].json["response_format"]["json_schema"]["name"], "decisions");
  const std::string listing = sent[1].json["messages"][1]["content"];
  // One handle per stored fact, shared by the candidates that see it.
  EXPECT_NE(listing.find("New fact 0: User lives in Berlin.\n  S1: User lives in Munich. (holds since 2025-01-10)"),
            std::string::npos)
      << listing;
  EXPECT_NE(listing.find("  S2: User enjoys green tea."), std::string::npos) << listing;
  EXPECT_EQ(listing.find("S3"), std::string::npos) << listing;
  EXPECT_NE(listing.find("New fact 2: User has a cat.\n  (no similar stored facts)"), std::string::npos) << listing;
}

TEST(LlmExtractorTest, ATargetNotListedIsSentBackOnceThenAnError) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  const StubReply one_fact =
      Facts(json::parse(R"([{"text": "User lives in Berlin.", "confidence": 1, "tags": [], "steps": [1],
                            "valid_from": ""}])"));
  auto extractor = MakeExtractorFor(stub);
  FakeFacts facts;
  facts.by_text["User lives in Berlin."] = {StoredFact("f-munich", "User lives in Munich.")};

  // Fixed on the second try.
  stub.Enqueue(kChatPath, one_fact);
  stub.Enqueue(kChatPath, Decisions(json::parse(R"([{"candidate": 0, "action": "supersede", "target": "S7"}])")));
  stub.Enqueue(kChatPath, Decisions(json::parse(R"([{"candidate": 0, "action": "supersede", "target": "S1"}])")));
  ASSERT_OK_AND_ASSIGN(auto candidates, extractor->ExtractWithFacts({Episode(1, "Berlin now", kT1)}, facts));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].target_id, "f-munich");
  const std::string correction = stub.Requests(kChatPath).back().json["messages"].back()["content"];
  EXPECT_NE(correction.find("'S7' is not a handle listed under new fact 0"), std::string::npos) << correction;

  // Wrong twice: the whole extraction fails, nothing half-decided comes back.
  stub.Enqueue(kChatPath, one_fact);
  stub.Enqueue(kChatPath, Decisions(json::parse(R"([{"candidate": 3, "action": "add", "target": ""}])")));
  stub.Enqueue(kChatPath, Decisions(json::parse(R"([{"candidate": 0, "action": "merge", "target": ""}])")));
  Result<std::vector<FactCandidate>> r = extractor->ExtractWithFacts({Episode(1, "Berlin now", kT1)}, facts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("'decisions'"), std::string::npos) << r.status().message();
}

TEST(LlmExtractorTest, BadValidFromIsSentBack) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, Facts(json::parse(
                              R"([{"text": "User is vegan.", "confidence": 1, "tags": ["preference"], "steps": [1],
                                   "valid_from": "last spring"}])")));
  stub.Enqueue(kChatPath, Facts(json::parse(
                              R"([{"text": "User is vegan.", "confidence": 1, "tags": ["preference"], "steps": [1],
                                   "valid_from": "2025-04-01"}])")));
  auto extractor = MakeExtractorFor(stub);
  ASSERT_OK_AND_ASSIGN(auto candidates, extractor->Extract({Episode(1, "vegan since last spring", kT1)}));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].valid_at, ParseIso8601("2025-04-01").value());
  EXPECT_EQ(stub.RequestCount(kChatPath), 2u);
}

TEST(LlmExtractorTest, ModelFailureFailsTheExtraction) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Error(503, "loading model"));
  stub.Enqueue(kChatPath, StubReply::Error(503, "loading model"));
  auto extractor = MakeExtractorFor(stub);
  Result<std::vector<FactCandidate>> r = extractor->Extract({Episode(1, "I like tea", kT1)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("loading model"), std::string::npos);
}

TEST(LlmExtractorTest, LongRunsAreCutIntoChunks) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, Facts(json::parse(
                              R"([{"text": "User likes tea.", "confidence": 0.7, "tags": ["preference"], "steps": [1],
                                   "valid_from": ""}])")));
  stub.Enqueue(kChatPath, Facts(json::parse(
                              R"([{"text": "User likes tea.", "confidence": 0.9, "tags": ["preference"], "steps": [3],
                                   "valid_from": ""}])")));
  LlmExtractorOptions o;
  o.max_chunk_chars = 150;
  o.max_episode_chars = 60;
  auto extractor = MakeExtractorFor(stub, o);
  std::string long_text(500, 'x');
  ASSERT_OK_AND_ASSIGN(auto candidates,
                       extractor->Extract({Episode(1, "I like tea " + long_text, kT1), Episode(2, "hello", kT1),
                                           Episode(3, "tea again", kT2)}));
  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 2u);
  const std::string first = sent[0].json["messages"][1]["content"];
  EXPECT_NE(first.find("[...]"), std::string::npos);   // the long episode was cut
  EXPECT_EQ(first.find("[step 3 "), std::string::npos);
  EXPECT_NE(sent[1].json["messages"][1]["content"].get<std::string>().find("[step 3 "), std::string::npos);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_DOUBLE_EQ(candidates[0].confidence, 0.9);
  EXPECT_EQ(candidates[0].source_episodes, (std::vector<std::string>{"ep-1", "ep-3"}));
}

TEST(LlmExtractorTest, NoEpisodesNoRequest) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  auto extractor = MakeExtractorFor(stub);
  ASSERT_OK_AND_ASSIGN(auto candidates, extractor->Extract({}));
  EXPECT_TRUE(candidates.empty());
  EXPECT_EQ(stub.RequestCount(kChatPath), 0u);
}

TEST(LlmExtractorFactoryTest, PicksTheConfiguredExtractor) {
  Options o;
  ASSERT_OK_AND_ASSIGN(auto rules, MakeConfiguredExtractor(o, ""));
  EXPECT_EQ(rules->name(), "rules");
  o.consolidation.extractor = ExtractorKind::kLlm;
  Result<std::unique_ptr<Extractor>> no_model = MakeConfiguredExtractor(o, "");
  ASSERT_FALSE(no_model.ok());
  EXPECT_NE(no_model.status().message().find("llm.model"), std::string::npos);
  o.llm.model = "llama3.1";
  ASSERT_OK_AND_ASSIGN(auto llm, MakeConfiguredExtractor(o, ""));
  EXPECT_EQ(llm->name(), "llm");
  o.llm.response_format = "yaml";
  EXPECT_FALSE(MakeConfiguredExtractor(o, "").ok());
}

TEST(LlmExtractorFactoryTest, OpenAiKeyGoesOnlyToOpenAi) {
  LlmOptions llm;
  llm.model = "m";
  llm.base_url = "http://localhost:11434/v1";
  ASSERT_OK_AND_ASSIGN(ChatOptions local, ChatOptionsFor(llm, "sk-env"));
  EXPECT_EQ(local.api_key, "");
  llm.base_url = "https://api.openai.com/v1";
  ASSERT_OK_AND_ASSIGN(ChatOptions openai, ChatOptionsFor(llm, "sk-env"));
  EXPECT_EQ(openai.api_key, "sk-env");
  llm.api_key = "sk-configured";
  ASSERT_OK_AND_ASSIGN(ChatOptions configured, ChatOptionsFor(llm, "sk-env"));
  EXPECT_EQ(configured.api_key, "sk-configured");
}

}  // namespace
}  // namespace msp
