// LLM consolidation through the engine, against a scripted model on the
// OpenAI stub: facts added, merged into the twin the model names or the
// engine finds, superseded (invalid_at, links, history, as-of queries),
// failures that keep the episodes for the next run, and the background
// worker (writes never wait, progress and queue survive a restart).
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "msp/memory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/openai_stub.h"
#include "tests/support/scripted_model.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

using json = nlohmann::json;
using msp::testing::kChatPath;
using msp::testing::OpenAiStub;
using msp::testing::ScriptedModel;
using msp::testing::StubReply;

using testing::FakeClock;

// Blocks stub handlers until opened; opens itself when it goes away.
class Gate {
 public:
  ~Gate() { Open(); }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TimeMs At(const char* iso) { return ParseIso8601(iso).value(); }

class LlmConsolidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(stub_.ok());
    ASSERT_TRUE(dir_.ok());
    clock_ = std::make_shared<FakeClock>(At("2026-01-01T09:00:00Z"));
    options_.store.data_dir = dir_.path() + "/data";
    options_.store.synchronous = "normal";
    options_.consolidation.extractor = ExtractorKind::kLlm;
    options_.consolidation.every_n_episodes = 0;
    options_.llm.base_url = stub_.base_url();
    options_.llm.model = "stub-model";
    options_.llm.max_retries = 0;
    options_.actor = "tester";
  }

  std::unique_ptr<MemoryLayer> Open(const Options& o) {
    auto r = MemoryLayer::Open(o, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : nullptr;
  }

  static Namespace Ns() {
    Namespace ns;
    ns.tenant = "acme";
    ns.user = "ann";
    return ns;
  }

  // A user message one minute after the last, in session `session`.
  Memory Say(MemoryLayer* m, const std::string& text, const std::string& session = "s1") {
    clock_->Advance(60 * 1000);
    EpisodeStep s;
    s.ns = Ns();
    s.ns.session = session;
    s.type = EpisodeType::kUserMessage;
    s.text = text;
    auto r = m->AddEpisode(s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Memory{};
  }

  std::vector<Memory> Facts(MemoryLayer* m, TimeMs as_of = 0) {
    ListRequest l;
    l.scope = Ns();
    l.filter.kinds = {Kind::kFact};
    l.limit = 0;
    l.as_of = as_of;
    auto r = m->List(l);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<Memory>{};
  }

  static std::vector<std::string> Texts(const std::vector<Memory>& v) {
    std::vector<std::string> out;
    for (const auto& m : v) out.push_back(m.text);
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string LastTranscript() {
    auto sent = stub_.Requests(kChatPath);
    for (auto it = sent.rbegin(); it != sent.rend(); ++it) {
      if (msp::testing::ResponseSchemaName(*it) == "facts") return it->json["messages"][1]["content"];
    }
    return "";
  }

  OpenAiStub stub_;
  ScriptedModel model_{&stub_};
  msp::testing::TempDir dir_{"llm-consolidation"};
  std::shared_ptr<FakeClock> clock_;
  Options options_;
};

TEST_F(LlmConsolidationTest, AddsTheFactsTheModelFinds) {
  auto mem = Open(options_);
  ASSERT_NE(mem, nullptr);
  Memory e1 = Say(mem.get(), "I prefer Python when I analyse data");
  Memory e2 = Say(mem.get(), "my laptop runs Ubuntu 22.04");
  model_.AddFacts({ScriptedModel::Fact("User prefers Python for data analysis.", {1}),
                   ScriptedModel::Fact("User uses Ubuntu 22.04.", {2}, 0.8, "environment")});
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.episodes_read, 2);
  EXPECT_EQ(report.candidates, 2);
  EXPECT_EQ(report.facts_added, 2);
  EXPECT_EQ(report.facts_merged, 0);
  ASSERT_EQ(report.fact_ids.size(), 2u);

  ASSERT_OK_AND_ASSIGN(Memory python, mem->Get(Ns(), report.fact_ids[0]));
  EXPECT_EQ(python.text, "User prefers Python for data analysis.");
  EXPECT_EQ(python.source, "consolidation");
  EXPECT_DOUBLE_EQ(python.confidence, 0.9);
  EXPECT_EQ(python.ns.session, "");  // facts outlive their session
  EXPECT_EQ(python.valid_at, e1.created_at);
  EXPECT_EQ(python.provenance, (std::vector<ProvenanceRef>{{"episode", e1.id, ""}}));
  ASSERT_OK_AND_ASSIGN(Memory ubuntu, mem->Get(Ns(), report.fact_ids[1]));
  EXPECT_EQ(ubuntu.tags, (std::vector<std::string>{"environment", "profile"}));
  EXPECT_EQ(ubuntu.valid_at, e2.created_at);

  // Nothing new: no model call, nothing added.
  const size_t calls = stub_.RequestCount(kChatPath);
  ASSERT_OK_AND_ASSIGN(ConsolidationReport again, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(again.episodes_read, 0);
  EXPECT_EQ(stub_.RequestCount(kChatPath), calls);
  EXPECT_EQ(Facts(mem.get()).size(), 2u);
}

TEST_F(LlmConsolidationTest, MergesIntoTheFactTheModelNames) {
  auto mem = Open(options_);
  ASSERT_NE(mem, nullptr);
  FactRequest f;
  f.ns = Ns();
  f.text = "User enjoys drinking green tea every morning.";
  f.confidence = 0.7;
  ASSERT_OK_AND_ASSIGN(WriteResult stored, mem->AddFact(f));
  Memory e1 = Say(mem.get(), "green tea is the best, I have it daily");
  model_.AddFacts({ScriptedModel::Fact("User likes green tea.", {1}, 0.95)});
  model_.AddDecisions({{{"candidate", 0}, {"action", "merge"}, {"target", "S1"}}});
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.facts_merged, 1);
  EXPECT_EQ(report.facts_added, 0);
  EXPECT_EQ(report.fact_ids, (std::vector<std::string>{stored.id}));

  // The model saw the stored fact under S1.
  auto decide = stub_.Requests(kChatPath).back();
  ASSERT_EQ(msp::testing::ResponseSchemaName(decide), "decisions");
  const std::string listing = decide.json["messages"][1]["content"];
  EXPECT_NE(listing.find("S1: User enjoys drinking green tea every morning."), std::string::npos) << listing;

  std::vector<Memory> facts = Facts(mem.get());
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].id, stored.id);
  EXPECT_EQ(facts[0].text, "User enjoys drinking green tea every morning.");
  EXPECT_DOUBLE_EQ(facts[0].confidence, 0.95);
  EXPECT_NE(std::find(facts[0].provenance.begin(), facts[0].provenance.end(), ProvenanceRef{"episode", e1.id, ""}),
            facts[0].provenance.end());
  ASSERT_OK_AND_ASSIGN(auto audit, mem->Audit(Ns(), stored.id, 10));
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0].action, AuditAction::kMerge);
  EXPECT_EQ(audit[0].reason, "restates this fact (consolidation)");
}

TEST_F(LlmConsolidationTest, ANearDuplicateMergesEvenWhenTheModelSaysAdd) {
  auto mem = Open(options_);
  ASSERT_NE(mem, nullptr);
  FactRequest f;
  f.ns = Ns();
  f.text = "User prefers dark mode in every editor.";
  ASSERT_OK_AND_ASSIGN(WriteResult stored, mem->AddFact(f));
  Say(mem.get(), "dark mode everywhere please, in every editor");
  model_.AddFacts({ScriptedModel::Fact("User prefers dark mode in every editor.", {1})});
  // No scripted decision: the scripted model adds; the engine finds the twin (cosine > 0.95).
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.facts_merged, 1);
  EXPECT_EQ(report.facts_added, 0);
  EXPECT_EQ(Facts(mem.get()).size(), 1u);
  EXPECT_EQ(report.fact_ids, (std::vector<std::string>{stored.id}));
}

TEST_F(LlmConsolidationTest, SupersedesAContradictedFactAndAnswersAsOf) {
  auto mem = Open(options_);
  ASSERT_NE(mem, nullptr);
  FactRequest f;
  f.ns = Ns();
  f.text = "User lives in Munich.";
  f.tags = {"profile"};
  f.valid_at = At("2025-06-01");
  ASSERT_OK_AND_ASSIGN(WriteResult munich, mem->AddFact(f));

  clock_->Set(At("2026-03-01T10:00:00Z"));
  Memory moved = Say(mem.get(), "I moved to Berlin last week");
  model_.AddFacts({ScriptedModel::Fact("User lives in Berlin.", {1}, 0.95, "profile")});
  model_.AddDecisions({{{"candidate", 0}, {"action", "supersede"}, {"target", "S1"}}});
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.facts_superseded, 1);
  EXPECT_EQ(report.facts_added, 0);
  ASSERT_EQ(report.fact_ids.size(), 1u);
  const std::string berlin_id = report.fact_ids[0];

  ASSERT_OK_AND_ASSIGN(Memory old, mem->Get(Ns(), munich.id));
  EXPECT_EQ(old.state, RecordState::kSuperseded);
  EXPECT_EQ(old.superseded_by, berlin_id);
  EXPECT_EQ(old.invalid_at, moved.created_at);  // it stopped holding when the user said so
  ASSERT_OK_AND_ASSIGN(Memory berlin, mem->Get(Ns(), berlin_id));
  EXPECT_EQ(berlin.supersedes, munich.id);
  EXPECT_EQ(berlin.valid_at, moved.created_at);
  EXPECT_EQ(berlin.state, RecordState::kActive);
  ASSERT_OK_AND_ASSIGN(auto history, mem->History(Ns(), munich.id));
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].id, munich.id);
  EXPECT_EQ(history[1].id, berlin_id);

  // Now: Berlin. What did we believe held in December 2025? Munich.
  EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User lives in Berlin."}));
  EXPECT_EQ(Texts(Facts(mem.get(), At("2025-12-01"))), (std::vector<std::string>{"User lives in Munich."}));
  EXPECT_EQ(Texts(Facts(mem.get(), At("2026-03-02"))), (std::vector<std::string>{"User lives in Berlin."}));
  EXPECT_TRUE(Facts(mem.get(), At("2025-01-01")).empty());  // before anything held

  RetrieveRequest q;
  q.scope = Ns();
  q.query = "where does the user live";
  q.filter.kinds = {Kind::kFact};
  q.as_of = At("2025-12-01");
  ASSERT_OK_AND_ASSIGN(auto then, mem->Retrieve(q));
  ASSERT_EQ(then.size(), 1u);
  EXPECT_EQ(then[0].memory.id, munich.id);
  q.as_of = 0;
  ASSERT_OK_AND_ASSIGN(auto now, mem->Retrieve(q));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].memory.id, berlin_id);
  q.as_of = -1;
  EXPECT_EQ(mem->Retrieve(q).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LlmConsolidationTest, AModelFailureKeepsTheEpisodesForTheNextRun) {
  auto mem = Open(options_);
  ASSERT_NE(mem, nullptr);
  Say(mem.get(), "I am allergic to peanuts");
  model_.AddFactsReply(StubReply::Error(503, "model is loading"));
  Result<ConsolidationReport> failed = mem->Consolidate(Ns(), "s1");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.status().message().find("model is loading"), std::string::npos);
  EXPECT_TRUE(Facts(mem.get()).empty());

  // An invalid reply twice is an error too, and loses nothing.
  model_.AddFactsReply(StubReply::ChatContent("{\"facts\": [{\"text\": \"x\"}]}"));
  model_.AddFactsReply(StubReply::ChatContent("not json at all"));
  Result<ConsolidationReport> invalid = mem->Consolidate(Ns(), "s1");
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("invalid 'facts' reply twice"), std::string::npos)
      << invalid.status().message();

  model_.AddFacts({ScriptedModel::Fact("User is allergic to peanuts.", {1}, 1.0, "constraint")});
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.episodes_read, 1);
  EXPECT_EQ(report.facts_added, 1);
  EXPECT_NE(LastTranscript().find("[step 1 "), std::string::npos);
  EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User is allergic to peanuts."}));
}

TEST_F(LlmConsolidationTest, AFailedAutomaticConsolidationSaysTheEpisodeIsStored) {
  Options o = options_;
  o.consolidation.every_n_episodes = 1;
  auto mem = Open(o);
  ASSERT_NE(mem, nullptr);
  model_.AddFactsReply(StubReply::Error(503, "model is loading"));
  EpisodeStep s;
  s.ns = Ns();
  s.ns.session = "s1";
  s.text = "I am allergic to peanuts";
  Result<Memory> added = mem->AddEpisode(s);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(added.status().message().find("stored as step 1, but consolidation failed"), std::string::npos)
      << added.status().message();
  ASSERT_OK_AND_ASSIGN(auto steps, mem->LastSteps(Ns(), "s1", 0));
  EXPECT_EQ(steps.size(), 1u);
}

TEST_F(LlmConsolidationTest, WithoutAModelTheRulesStayTheDefault) {
  Options o = options_;
  o.consolidation = ConsolidationOptions{};
  o.consolidation.every_n_episodes = 0;
  auto mem = Open(o);
  ASSERT_NE(mem, nullptr);
  Say(mem.get(), "I prefer tabs over spaces");
  ASSERT_OK_AND_ASSIGN(ConsolidationReport report, mem->Consolidate(Ns(), "s1"));
  EXPECT_EQ(report.facts_added, 1);
  EXPECT_EQ(stub_.RequestCount(kChatPath), 0u);

  o.consolidation.extractor = ExtractorKind::kLlm;
  o.llm.model.clear();
  Result<std::unique_ptr<MemoryLayer>> no_model = MemoryLayer::Open(o, clock_);
  ASSERT_FALSE(no_model.ok());
  EXPECT_NE(no_model.status().message().find("llm.model"), std::string::npos);
}

TEST_F(LlmConsolidationTest, BackgroundWritesNeverWaitForTheModel) {
  Gate gate;
  stub_.SetDefault(kChatPath, [&](const msp::testing::StubRequest& request) {
    gate.Wait();
    if (msp::testing::ResponseSchemaName(request) != "facts") return StubReply::Error(418, "unexpected");
    return StubReply::ChatContent(json{{"facts", json::array({ScriptedModel::Fact("User drinks oat milk.", {2})})}}.dump());
  });
  Options o = options_;
  o.consolidation.background = true;
  o.consolidation.every_n_episodes = 2;
  auto mem = Open(o);
  ASSERT_NE(mem, nullptr);
  Say(mem.get(), "hello there, starting a new chat");
  Say(mem.get(), "I only drink oat milk in my coffee");  // queues the session
  // Both writes returned although the model has not answered (it cannot until the gate opens).
  ASSERT_OK_AND_ASSIGN(ConsolidationReport ended, mem->EndSession(Ns(), "s1"));  // queues too
  EXPECT_EQ(ended.facts_added, 0);
  EXPECT_TRUE(Facts(mem.get()).empty());
  gate.Open();
  ASSERT_OK(mem->WaitForConsolidation());
  EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User drinks oat milk."}));
  EXPECT_EQ(stub_.Requests(kChatPath).size(), 1u);  // the repeat found nothing new to read
}

TEST_F(LlmConsolidationTest, BackgroundProgressSurvivesARestart) {
  Options o = options_;
  o.consolidation.background = true;
  o.consolidation.every_n_episodes = 2;
  {
    auto mem = Open(o);
    ASSERT_NE(mem, nullptr);
    model_.AddFacts({ScriptedModel::Fact("User codes in Rust.", {1})});
    Say(mem.get(), "I write Rust at work");
    Say(mem.get(), "mostly backend services");
    ASSERT_OK(mem->WaitForConsolidation());
    EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User codes in Rust."}));
  }
  auto mem = Open(o);
  ASSERT_NE(mem, nullptr);
  ASSERT_OK(mem->WaitForConsolidation());
  EXPECT_EQ(stub_.RequestCount(kChatPath), 1u);  // nothing queued was left, nothing redone
  model_.AddFacts({ScriptedModel::Fact("User uses Neovim.", {3})});
  Say(mem.get(), "my editor is Neovim");
  Say(mem.get(), "with a few plugins");
  ASSERT_OK(mem->WaitForConsolidation());
  const std::string transcript = LastTranscript();
  EXPECT_EQ(transcript.find("[step 1 "), std::string::npos) << transcript;
  EXPECT_EQ(transcript.find("[step 2 "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("[step 3 "), std::string::npos) << transcript;
  EXPECT_NE(transcript.find("[step 4 "), std::string::npos) << transcript;
  EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User codes in Rust.", "User uses Neovim."}));
}

TEST_F(LlmConsolidationTest, QueuedWorkSurvivesARestart) {
  Options down = options_;
  down.consolidation.background = true;
  down.consolidation.every_n_episodes = 2;
  {
    // A model that is not there: the queued session fails and is dropped at close.
    OpenAiStub gone;
    ASSERT_TRUE(gone.ok());
    down.llm.base_url = gone.base_url();
    gone.Stop();
    auto mem = Open(down);
    ASSERT_NE(mem, nullptr);
    Say(mem.get(), "I am vegetarian");
    Say(mem.get(), "no meat, no fish");
  }
  Options up = down;
  up.llm.base_url = stub_.base_url();
  model_.AddFacts({ScriptedModel::Fact("User is vegetarian.", {1, 2}, 1.0, "constraint")});
  {
    auto mem = Open(up);  // finds the session in the stored queue
    ASSERT_NE(mem, nullptr);
    ASSERT_OK(mem->WaitForConsolidation());
    EXPECT_EQ(Texts(Facts(mem.get())), (std::vector<std::string>{"User is vegetarian."}));
  }
  auto mem = Open(up);  // the queue was emptied: nothing to redo
  ASSERT_NE(mem, nullptr);
  ASSERT_OK(mem->WaitForConsolidation());
  EXPECT_EQ(stub_.RequestCount(kChatPath), 1u);
  EXPECT_EQ(Facts(mem.get()).size(), 1u);
}

}  // namespace
}  // namespace msp
