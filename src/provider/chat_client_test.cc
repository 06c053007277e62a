// ChatClient against the scripted OpenAI stub: request form, tool calls,
// json_schema replies, the response_format fallback, and invalid replies
// retried once then reported.
#include "provider/chat_client.h"

#include <gtest/gtest.h>

#include "tests/support/openai_stub.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

using json = nlohmann::json;
using msp::testing::kChatPath;
using msp::testing::OpenAiStub;
using msp::testing::StubReply;

const json kSchema = json::parse(R"({
  "type": "object",
  "properties": {"answer": {"type": "integer", "minimum": 0}},
  "required": ["answer"],
  "additionalProperties": false
})");

ChatOptions Opts(const OpenAiStub& stub) {
  ChatOptions o;
  o.base_url = stub.base_url();
  o.model = "test-model";
  o.api_key = "sk-chat";
  o.max_retries = 2;
  o.initial_backoff_ms = 1;
  o.sleep = [](std::chrono::milliseconds) {};
  return o;
}

JsonReplySpec Spec() { return {"answer", kSchema, nullptr}; }

TEST(ChatClientTest, CreateNeedsAModelAndAGoodUrl) {
  ChatOptions o;
  o.base_url = "http://127.0.0.1:1/v1";
  EXPECT_EQ(ChatClient::Create(o).status().code(), StatusCode::kInvalidArgument);
  o.model = "m";
  o.base_url = "127.0.0.1:1";
  Result<std::unique_ptr<ChatClient>> r = ChatClient::Create(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("llm"), std::string::npos);
}

TEST(ChatClientTest, ParsesResponseFormatNames) {
  for (auto f : {ResponseFormat::kAuto, ResponseFormat::kJsonSchema, ResponseFormat::kJsonObject,
                 ResponseFormat::kPromptOnly}) {
    ASSERT_OK_AND_ASSIGN(ResponseFormat back, ParseResponseFormat(ResponseFormatName(f)));
    EXPECT_EQ(back, f);
  }
  EXPECT_FALSE(ParseResponseFormat("xml").ok());
}

TEST(ChatClientTest, CompleteSendsMessagesAndToolsAndReadsToolCalls) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatToolCalls(json::parse(R"([
    {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"tea\"}"}},
    {"id": "call_2", "type": "function", "function": {"name": "recall", "arguments": {"k": 3}}}])")));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ChatRequest req;
  req.messages = {ChatMessage::System("be brief"), ChatMessage::User("find tea")};
  ChatMessage earlier = ChatMessage::Assistant("");
  earlier.tool_calls.push_back({"call_0", "search", "{}"});
  req.messages.push_back(earlier);
  req.messages.push_back(ChatMessage::ToolResult("call_0", "nothing"));
  req.tools.push_back({"search", "Search memory", json::parse(R"({"type":"object","properties":{"q":{"type":"string"}}})")});
  req.tool_choice = "auto";
  ASSERT_OK_AND_ASSIGN(ChatReply reply, client->Complete(req));
  EXPECT_EQ(reply.finish_reason, "tool_calls");
  ASSERT_EQ(reply.message.tool_calls.size(), 2u);
  EXPECT_EQ(reply.message.tool_calls[0], (ToolCall{"call_1", "search", "{\"q\":\"tea\"}"}));
  EXPECT_EQ(reply.message.tool_calls[1].arguments, "{\"k\":3}");
  EXPECT_EQ(reply.prompt_tokens, 1);

  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 1u);
  const json& body = sent[0].json;
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(sent[0].headers["authorization"], "Bearer sk-chat");
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_EQ(body["messages"][2]["content"], nullptr);
  EXPECT_EQ(body["messages"][2]["tool_calls"][0]["function"]["name"], "search");
  EXPECT_EQ(body["messages"][3]["role"], "tool");
  EXPECT_EQ(body["messages"][3]["tool_call_id"], "call_0");
  EXPECT_EQ(body["tools"][0]["type"], "function");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "search");
  EXPECT_EQ(body["tool_choice"], "auto");
  EXPECT_FALSE(body.contains("response_format"));
}

TEST(ChatClientTest, MessagesRoundTripThroughJson) {
  ChatMessage m = ChatMessage::Assistant("");
  m.tool_calls.push_back({"c1", "f", "{\"a\":1}"});
  ASSERT_OK_AND_ASSIGN(ChatMessage back, ChatMessageFromJson(ChatMessageToJson(m)));
  EXPECT_EQ(back, m);
  ChatMessage t = ChatMessage::ToolResult("c1", "result");
  ASSERT_OK_AND_ASSIGN(ChatMessage t2, ChatMessageFromJson(ChatMessageToJson(t)));
  EXPECT_EQ(t2, t);
  EXPECT_FALSE(ChatMessageFromJson(json::parse(R"({"role":"assistant","tool_calls":[{"id":"x"}]})")).ok());
}

TEST(ChatClientTest, JsonSchemaHappyPath) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 42}"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ASSERT_OK_AND_ASSIGN(json j, client->CompleteJson({ChatMessage::User("6 x 7?")}, Spec()));
  EXPECT_EQ(j["answer"], 42);
  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 1u);
  const json& rf = sent[0].json["response_format"];
  EXPECT_EQ(rf["type"], "json_schema");
  EXPECT_EQ(rf["json_schema"]["name"], "answer");
  EXPECT_EQ(rf["json_schema"]["strict"], true);
  // The bounds stay home: strict servers refuse them; the client checks them.
  json wire = kSchema;
  wire["properties"]["answer"].erase("minimum");
  EXPECT_EQ(rf["json_schema"]["schema"], wire);
  EXPECT_EQ(sent[0].json["temperature"], 0.0);
  EXPECT_EQ(client->current_format(), ResponseFormat::kJsonSchema);
}

TEST(ChatClientTest, AutoFallsBackWhenResponseFormatIsRejected) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Error(400, "response_format type json_schema is not supported"));
  stub.Enqueue(kChatPath, StubReply::Error(400, "Unknown response_format: json_object"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("Sure! ```json\n{\"answer\": 7}\n```"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 8}"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ASSERT_OK_AND_ASSIGN(json j, client->CompleteJson({ChatMessage::User("q")}, Spec()));
  EXPECT_EQ(j["answer"], 7);
  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].json["response_format"]["type"], "json_schema");
  EXPECT_EQ(sent[1].json["response_format"]["type"], "json_object");
  EXPECT_FALSE(sent[2].json.contains("response_format"));
  // Without response_format the schema travels in the system prompt.
  const std::string system = sent[2].json["messages"][0]["content"];
  EXPECT_EQ(sent[2].json["messages"][0]["role"], "system");
  EXPECT_NE(system.find("\"answer\""), std::string::npos) << system;
  // The fallback sticks: the next call goes straight to prompt-only.
  EXPECT_EQ(client->current_format(), ResponseFormat::kPromptOnly);
  ASSERT_OK_AND_ASSIGN(json k, client->CompleteJson({ChatMessage::User("q2")}, Spec()));
  EXPECT_EQ(k["answer"], 8);
  auto again = stub.Requests(kChatPath);
  ASSERT_EQ(again.size(), 4u);
  EXPECT_FALSE(again[3].json.contains("response_format"));
}

TEST(ChatClientTest, FixedFormatDoesNotFallBack) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Error(400, "response_format is not supported"));
  ChatOptions o = Opts(stub);
  o.response_format = ResponseFormat::kJsonSchema;
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(o));
  Result<json> r = client->CompleteJson({ChatMessage::User("q")}, Spec());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stub.RequestCount(kChatPath), 1u);
}

TEST(ChatClientTest, AnUnrelated400IsReportedNotFallenBackFrom) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Error(400, "model 'x' not found, try pulling it first"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  Result<json> r = client->CompleteJson({ChatMessage::User("q")}, Spec());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("try pulling"), std::string::npos);
  EXPECT_EQ(stub.RequestCount(kChatPath), 1u);
  EXPECT_EQ(client->current_format(), ResponseFormat::kJsonSchema);
}

TEST(ChatClientTest, JsonObjectModePutsSchemaInPrompt) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 1}"));
  ChatOptions o = Opts(stub);
  o.response_format = ResponseFormat::kJsonObject;
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(o));
  ASSERT_OK(client->CompleteJson({ChatMessage::System("You count."), ChatMessage::User("q")}, Spec()).status());
  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].json["response_format"]["type"], "json_object");
  ASSERT_EQ(sent[0].json["messages"].size(), 2u);  // the instruction joins the existing system message
  const std::string system = sent[0].json["messages"][0]["content"];
  EXPECT_EQ(system.rfind("You count.", 0), 0u);
  EXPECT_NE(system.find("JSON Schema"), std::string::npos);
}

TEST(ChatClientTest, InvalidReplyIsRetriedOnceWithTheError) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": -3}"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 3}"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ASSERT_OK_AND_ASSIGN(json j, client->CompleteJson({ChatMessage::User("q")}, Spec()));
  EXPECT_EQ(j["answer"], 3);
  auto sent = stub.Requests(kChatPath);
  ASSERT_EQ(sent.size(), 2u);
  const json& msgs = sent[1].json["messages"];
  ASSERT_GE(msgs.size(), 3u);
  EXPECT_EQ(msgs[msgs.size() - 2]["role"], "assistant");
  EXPECT_EQ(msgs[msgs.size() - 2]["content"], "{\"answer\": -3}");
  const std::string correction = msgs.back()["content"];
  EXPECT_NE(correction.find("$.answer: -3 is below the minimum 0"), std::string::npos) << correction;
}

TEST(ChatClientTest, SecondInvalidReplyIsAnError) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatContent("I cannot answer that."));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": \"many\"}"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 1}"));  // never asked for
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  Result<json> r = client->CompleteJson({ChatMessage::User("q")}, Spec());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("invalid 'answer' reply twice"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("expected integer"), std::string::npos) << r.status().message();
  EXPECT_EQ(stub.RequestCount(kChatPath), 2u);
  EXPECT_EQ(stub.Pending(kChatPath), 1u);
}

TEST(ChatClientTest, CallerCheckCountsAsValidation) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 13}"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 12}"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  JsonReplySpec spec = Spec();
  spec.check = [](const json& j) {
    return j["answer"].get<int>() % 2 == 0 ? Status::Ok() : Status::InvalidArgument("answer must be even");
  };
  ASSERT_OK_AND_ASSIGN(json j, client->CompleteJson({ChatMessage::User("q")}, spec));
  EXPECT_EQ(j["answer"], 12);
  const std::string correction = stub.Requests(kChatPath).back().json["messages"].back()["content"];
  EXPECT_NE(correction.find("answer must be even"), std::string::npos);
}

TEST(ChatClientTest, MalformedHttpBodyAndServerErrorsAreRetried) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Error(500, "overloaded"));
  stub.Enqueue(kChatPath, StubReply::Raw(200, "{\"choices\": [", "application/json"));
  stub.Enqueue(kChatPath, StubReply::ChatContent("{\"answer\": 5}"));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ASSERT_OK_AND_ASSIGN(json j, client->CompleteJson({ChatMessage::User("q")}, Spec()));
  EXPECT_EQ(j["answer"], 5);
  EXPECT_EQ(stub.RequestCount(kChatPath), 3u);
}

TEST(ChatClientTest, ReplyWithoutChoicesIsUnavailable) {
  OpenAiStub stub;
  ASSERT_TRUE(stub.ok());
  stub.Enqueue(kChatPath, StubReply::Json({{"object", "chat.completion"}, {"choices", json::array()}}));
  ASSERT_OK_AND_ASSIGN(auto client, ChatClient::Create(Opts(stub)));
  ChatRequest req;
  req.messages = {ChatMessage::User("q")};
  Result<ChatReply> r = client->Complete(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("choices[0].message"), std::string::npos);
}

TEST(ExtractJsonTest, FindsJsonInModelText) {
  ASSERT_OK_AND_ASSIGN(json a, ExtractJsonFromText("  {\"a\": 1}  "));
  EXPECT_EQ(a["a"], 1);
  ASSERT_OK_AND_ASSIGN(json b, ExtractJsonFromText("<think>{not this}</think>Here:\n```json\n{\"a\": 2}\n```\nDone."));
  EXPECT_EQ(b["a"], 2);
  ASSERT_OK_AND_ASSIGN(json c, ExtractJsonFromText("The answer is {\"a\": \"}{\", \"b\": [3]} as asked."));
  EXPECT_EQ(c["b"][0], 3);
  EXPECT_FALSE(ExtractJsonFromText("no json here").ok());
  EXPECT_FALSE(ExtractJsonFromText("{\"a\": ").ok());
}

}  // namespace
}  // namespace msp
