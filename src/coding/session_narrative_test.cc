// Session summaries in prose through a chat model (scripted OpenAI-compatible
// server): what the model is sent, what is kept of its reply, the hook's
// limits, and the record the narrative ends up in.
#include "coding/session_narrative.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"
#include "util/utf8.h"

namespace msp {
namespace {

SessionSummary Sample() {
  SessionSummary s;
  s.session_id = "sess-n";
  s.repository = "/home/u/webapp";
  s.branch = "feature/login";
  s.asked = {"Fix the login form. Let's use zod instead of yup."};
  s.files_changed = {"src/login.ts"};
  s.commands = {{"npm test", 1, true}};
  s.tool_uses = 2;
  s.failures = 1;
  s.outcome = "ended after a failing command (npm test)";
  return s;
}

std::unique_ptr<ChatClient> Client(const testing::OpenAiStub& stub) {
  ChatOptions c;
  c.base_url = stub.base_url();
  c.model = "stub-model";
  c.max_retries = 0;
  auto chat = ChatClient::Create(c);
  EXPECT_TRUE(chat.ok()) << chat.status().ToString();
  return chat.ok() ? std::move(chat).value() : nullptr;
}

TEST(SessionNarrativeTest, TheModelIsSentTheRecordAndItsParagraphIsKeptOnOneLine) {
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(testing::kChatPath,
               testing::StubReply::ChatContent(
                   R"({"summary":"Moved the login form to zod.\n\nnpm test   still fails in src/login.ts."})"));
  auto chat = Client(stub);
  ASSERT_NE(chat, nullptr);
  ASSERT_OK_AND_ASSIGN(std::string text, NarrateSessionWithModel(*chat, Sample()));
  EXPECT_EQ(text, "Moved the login form to zod. npm test still fails in src/login.ts.");
  const auto sent = stub.Requests(testing::kChatPath);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(testing::ResponseSchemaName(sent[0]), "session_summary");
  // The rules' record is what the model reads: the prompt, files, commands.
  EXPECT_NE(sent[0].body.find("Let's use zod instead of yup."), std::string::npos) << sent[0].body;
  EXPECT_NE(sent[0].body.find("src/login.ts"), std::string::npos);
  EXPECT_NE(sent[0].body.find("npm test"), std::string::npos);
}

TEST(SessionNarrativeTest, ALongParagraphIsCutBetweenCharactersAndAnEmptyOneIsAnError) {
  testing::OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "é ";
  stub.Enqueue(testing::kChatPath,
               testing::StubReply::ChatContent(nlohmann::json{{"summary", long_text}}.dump()));
  stub.Enqueue(testing::kChatPath, testing::StubReply::ChatContent(R"({"summary":"   \n "})"));
  stub.Enqueue(testing::kChatPath, testing::StubReply::Error(503, "model loading"));
  auto chat = Client(stub);
  ASSERT_NE(chat, nullptr);
  ASSERT_OK_AND_ASSIGN(std::string cut, NarrateSessionWithModel(*chat, Sample()));
  EXPECT_TRUE(IsValidUtf8(cut));
  EXPECT_EQ(Utf8Chars(cut), kSessionNarrativeChars);
  EXPECT_EQ(cut.substr(cut.size() - std::string("…").size()), "…");
  Result<std::string> blank = NarrateSessionWithModel(*chat, Sample());
  EXPECT_FALSE(blank.ok());
  Result<std::string> down = NarrateSessionWithModel(*chat, Sample());
  EXPECT_FALSE(down.ok());
  EXPECT_NE(down.status().message().find("model loading"), std::string::npos) << down.status().ToString();
}

TEST(SessionNarrativeTest, TheModelIsUsedWhenAskedOrWhenAutoFindsAModel) {
  CodingOptions coding;
  LlmOptions llm;
  EXPECT_FALSE(SessionSummaryUsesModel(coding, llm));  // auto, no model
  llm.model = "qwen";
  EXPECT_TRUE(SessionSummaryUsesModel(coding, llm));
  coding.session_summary = ModelChoice::kRules;
  EXPECT_FALSE(SessionSummaryUsesModel(coding, llm));
  coding.session_summary = ModelChoice::kLlm;
  llm.model.clear();
  EXPECT_TRUE(SessionSummaryUsesModel(coding, llm));  // and fails at the call: no model named
}

TEST(SessionNarrativeTest, TheHookWaitsSecondsNotMinutesAndTriesOnce) {
  ChatOptions o;
  o.timeout_ms = 120000;
  o.connect_timeout_ms = 10000;
  o.max_retries = 3;
  ChatOptions held = SessionNarrativeChatOptions(o);
  EXPECT_EQ(held.timeout_ms, 6000);
  EXPECT_EQ(held.connect_timeout_ms, 2000);
  EXPECT_EQ(held.max_retries, 0);
  o.timeout_ms = 500;  // a shorter limit stays
  EXPECT_EQ(SessionNarrativeChatOptions(o).timeout_ms, 500);
}

TEST(SessionNarrativeTest, TheRecordCarriesTheNarrativeAndNamesItsMaker) {
  SessionSummary s = Sample();
  EXPECT_EQ(SessionSummaryText(s).find("## Summary"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(SessionSummaryBody(s))["made_by"], "rules");
  s.narrative = "Moved the login form to zod; npm test still fails.";
  s.made_by = "llm:qwen";
  const std::string text = SessionSummaryText(s);
  EXPECT_NE(text.find("## Summary (llm:qwen)\nMoved the login form to zod; npm test still fails."), std::string::npos)
      << text;
  EXPECT_NE(text.find("## Files changed"), std::string::npos);  // the rules' sections stay
  const nlohmann::json body = nlohmann::json::parse(SessionSummaryBody(s));
  EXPECT_EQ(body["made_by"], "llm:qwen");
  EXPECT_EQ(body["narrative"], s.narrative);
}

}  // namespace
}  // namespace msp
