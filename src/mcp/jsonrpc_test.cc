// Tests of JSON-RPC message parsing.
#include "mcp/jsonrpc.h"

#include <gtest/gtest.h>

namespace msp::mcp {
namespace {

using nlohmann::json;

int ErrorCode(const ParsedMessage& p) {
  EXPECT_FALSE(p.message.has_value());
  EXPECT_TRUE(p.error_reply.is_object());
  return p.error_reply.is_object() ? p.error_reply["error"]["code"].get<int>() : 0;
}

TEST(JsonRpc, ParsesRequestsNotificationsAndResponses) {
  ParsedMessage p = ParseJsonRpc(R"({"jsonrpc":"2.0","id":0,"method":"ping"})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->type, MessageType::kRequest);
  EXPECT_EQ(p.message->id, json(0));
  EXPECT_EQ(p.message->method, "ping");
  EXPECT_EQ(p.message->params, json::object());

  p = ParseJsonRpc(R"({"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{"cursor":null}})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->id, json("abc"));
  EXPECT_TRUE(p.message->params.contains("cursor"));

  p = ParseJsonRpc(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->type, MessageType::kNotification);

  p = ParseJsonRpc(R"({"jsonrpc":"2.0","id":7,"result":{}})");
  ASSERT_TRUE(p.message);
  EXPECT_EQ(p.message->type, MessageType::kResponse);
}

TEST(JsonRpc, RefusesWhatIsNotAValidMessage) {
  EXPECT_EQ(ErrorCode(ParseJsonRpc("{not json")), kParseError);
  EXPECT_EQ(ErrorCode(ParseJsonRpc("[{not json")), kParseError);
  EXPECT_EQ(ErrorCode(ParseJsonRpc("\xff")), kParseError);
  EXPECT_EQ(ErrorCode(ParseJsonRpc("42")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"id":1,"method":"ping"})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"1.0","id":1,"method":"ping"})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"2.0","id":1,"method":3})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"2.0","id":1})")), kInvalidRequest);
  EXPECT_EQ(ErrorCode(ParseJsonRpc(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})")), kInvalidParams);
  // The id survives in the error reply when it was valid.
  ParsedMessage p = ParseJsonRpc(R"({"jsonrpc":"2.0","id":"q","method":"x","params":[1]})");
  EXPECT_EQ(p.error_reply["id"], json("q"));
  // A parse error that quotes the bytes it stopped at, here the first of a
  // three-byte character, still yields a reply that is valid UTF-8 JSON
  // (found by fuzz/jsonrpc_fuzz.cc: dump() threw on the lone byte).
  p = ParseJsonRpc("{\"jsonrpc\": \"2.0\", \xe6\x9c\x9eVersion\": 1}");
  EXPECT_EQ(ErrorCode(p), kParseError);
  const std::string reply = p.error_reply.dump();
  EXPECT_NE(reply.find("\\\\xE6"), std::string::npos) << reply;
  // A malformed notification gets no reply at all.
  p = ParseJsonRpc(R"({"jsonrpc":"2.0","method":"x","params":[1]})");
  EXPECT_FALSE(p.message);
  EXPECT_TRUE(p.error_reply.is_null());
}

TEST(JsonRpc, RefusesBatches) {
  ParsedMessage p = ParseJsonRpc(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  EXPECT_EQ(ErrorCode(p), kInvalidRequest);
  EXPECT_TRUE(p.batch);
  EXPECT_NE(p.error_reply["error"]["message"].get<std::string>().find("batches are not supported"), std::string::npos);
  EXPECT_TRUE(p.error_reply["id"].is_null());
}

TEST(JsonRpc, BuildsReplies) {
  EXPECT_EQ(MakeResult(0, json::object()).dump(), R"({"id":0,"jsonrpc":"2.0","result":{}})");
  EXPECT_EQ(MakeError("a", kMethodNotFound, "no").dump(),
            R"({"error":{"code":-32601,"message":"no"},"id":"a","jsonrpc":"2.0"})");
}

}  // namespace
}  // namespace msp::mcp
