// A tiny MCP server over stdio for the agent's tests: newline-delimited
// JSON-RPC on stdin/stdout. Tools: "shout" (upper-cases its "text"), "fail"
// (always reports isError). Before answering a tools/call it pings the
// client and waits for the answer, so the client's handling of server
// requests is exercised. Exits on EOF.
#include <cctype>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

namespace {

void Write(const json& j) { std::cout << j.dump() << "\n" << std::flush; }

json Tools() {
  return json::array(
      {{{"name", "shout"},
        {"description", "Upper-cases a text."},
        {"inputSchema",
         {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}, {"required", {"text"}}}}},
       {{"name", "fail"},
        {"description", "Always fails."},
        {"inputSchema", {{"type", "object"}, {"properties", json::object()}}}}});
}

}  // namespace

int main() {
  std::string line;
  int pings = 0;
  while (std::getline(std::cin, line)) {
    const json msg = json::parse(line, nullptr, false);
    if (msg.is_discarded() || !msg.contains("method")) continue;  // responses and junk
    const std::string method = msg["method"];
    if (!msg.contains("id")) continue;  // notifications
    const json id = msg["id"];
    if (method == "initialize") {
      Write({{"jsonrpc", "2.0"},
             {"id", id},
             {"result",
              {{"protocolVersion", msg["params"].value("protocolVersion", "2025-06-18")},
               {"capabilities", {{"tools", json::object()}}},
               {"serverInfo", {{"name", "echo-test"}, {"version", "1"}}}}}});
    } else if (method == "tools/list") {
      Write({{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"tools", Tools()}}}});
    } else if (method == "tools/call") {
      // A server-to-client request first; its answer must come back.
      Write({{"jsonrpc", "2.0"}, {"id", "srv-" + std::to_string(++pings)}, {"method", "ping"}});
      std::string reply;
      if (!std::getline(std::cin, reply)) return 1;
      const json r = json::parse(reply, nullptr, false);
      if (r.is_discarded() || !r.contains("result")) return 2;
      const std::string name = msg["params"].value("name", "");
      const json args = msg["params"].value("arguments", json::object());
      if (name == "shout") {
        std::string text = args.value("text", "");
        for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        json content = json::array({json{{"type", "text"}, {"text", text}}});
        Write(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", json{{"content", content}, {"isError", false}}}});
      } else if (name == "fail") {
        json content = json::array({json{{"type", "text"}, {"text", "it failed on purpose"}}});
        Write(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", json{{"content", content}, {"isError", true}}}});
      } else {
        Write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32602}, {"message", "unknown tool " + name}}}});
      }
    } else {
      Write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32601}, {"message", "no method " + method}}}});
    }
  }
  return 0;
}
