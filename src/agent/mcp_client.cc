// The stdio MCP client: a socket pair as the server's stdin and stdout
// (send with MSG_NOSIGNAL, so a dead server is an error, not SIGPIPE).
#include "agent/mcp_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

extern char** environ;

namespace msp {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t kMaxLine = 16u << 20;
constexpr const char* kProtocolVersion = "2025-06-18";

bool IsServerName(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<McpServerSpec> ParseMcpServerSpec(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("agent.mcp_servers: '" + std::string(text) +
                                   "' must be NAME=COMMAND [ARG ...], e.g. files=npx -y some-mcp-server");
  }
  McpServerSpec spec;
  spec.name = std::string(text.substr(0, eq));
  if (!IsServerName(spec.name)) {
    return Status::InvalidArgument("agent.mcp_servers: server name '" + spec.name +
                                   "' must be 1..32 characters of A-Z a-z 0-9 _ -");
  }
  const std::string_view rest = text.substr(eq + 1);
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < rest.size()) {
        word += rest[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t') {
      if (in_word) spec.argv.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < rest.size()) {
      word += rest[++i];
    } else {
      word += c;
    }
  }
  if (quote != 0) return Status::InvalidArgument("agent.mcp_servers: unterminated quote in '" + std::string(text) + "'");
  if (in_word) spec.argv.push_back(std::move(word));
  if (spec.argv.empty()) return Status::InvalidArgument("agent.mcp_servers: server '" + spec.name + "' has no command");
  return spec;
}

Result<std::unique_ptr<McpClient>> McpClient::Start(const McpServerSpec& spec, int timeout_ms) {
  if (spec.argv.empty()) return Status::InvalidArgument("MCP server '" + spec.name + "' has no command");
  if (timeout_ms <= 0) return Status::InvalidArgument("MCP timeout must be > 0 ms");
  std::unique_ptr<McpClient> c(new McpClient(spec, timeout_ms));
  MSP_RETURN_IF_ERROR(c->Spawn());
  json params = {{"protocolVersion", kProtocolVersion},
                 {"capabilities", json::object()},
                 {"clientInfo", {{"name", "msp"}, {"version", "0.1.0"}}}};
  Result<json> init = c->Request("initialize", params);
  if (!init.ok()) return init.status().WithContext("MCP server '" + spec.name + "': initialize");
  if (init->contains("serverInfo") && (*init)["serverInfo"].is_object()) {
    c->server_name_ = (*init)["serverInfo"].value("name", "");
  }
  MSP_RETURN_IF_ERROR(c->Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  return c;
}

Status McpClient::Spawn() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::Unavailable("MCP server '" + spec_.name + "': socketpair failed: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sv[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : spec_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    return Status::Unavailable("MCP server '" + spec_.name + "': cannot start '" + spec_.argv[0] +
                               "': " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
  return Status::Ok();
}

McpClient::~McpClient() {
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_WR);  // EOF on the server's stdin: MCP's way to stop
  }
  if (pid_ > 0) {
    int status = 0;
    bool done = false;
    for (int i = 0; i < 100 && !done; ++i) {  // up to ~1 s
      done = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!done) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100 && !done; ++i) {
        done = waitpid(pid_, &status, WNOHANG) == pid_;
        if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (!done) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  if (fd_ >= 0) close(fd_);
}

Status McpClient::Send(const json& message) {
  const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable("MCP server '" + spec_.name + "' stopped reading: " + std::strerror(errno));
    }
    sent += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> McpClient::ReadLine() {
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(timeout_ms_);
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (buffer_.size() > kMaxLine) {
      return Status::Unavailable("MCP server '" + spec_.name + "' sent a line over " + std::to_string(kMaxLine) +
                                 " bytes");
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) {
      return Status::Unavailable("MCP server '" + spec_.name + "' did not answer within " +
                                 std::to_string(timeout_ms_) + " ms (agent.mcp_timeout_ms)");
    }
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(left));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable("MCP server '" + spec_.name + "': poll failed: " + std::strerror(errno));
    }
    if (r == 0) continue;
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::Unavailable("MCP server '" + spec_.name + "': read failed: " + std::strerror(errno));
    }
    if (n == 0) return Status::Unavailable("MCP server '" + spec_.name + "' closed its output (it exited)");
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

Result<json> McpClient::Request(const std::string& method, const json& params) {
  const int64_t id = next_id_++;
  MSP_RETURN_IF_ERROR(Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}));
  for (;;) {
    MSP_ASSIGN_OR_RETURN(std::string line, ReadLine());
    if (line.empty()) continue;
    const json msg = json::parse(line, nullptr, false);
    if (msg.is_discarded() || !msg.is_object()) {
      return Status::Unavailable("MCP server '" + spec_.name + "' wrote a line that is not JSON-RPC: " +
                                 line.substr(0, 200));
    }
    if (msg.contains("method")) {
      // A request or notification from the server: answer pings, refuse
      // other requests, ignore notifications.
      if (msg.contains("id")) {
        if (msg["method"] == "ping") {
          MSP_RETURN_IF_ERROR(Send({{"jsonrpc", "2.0"}, {"id", msg["id"]}, {"result", json::object()}}));
        } else {
          MSP_RETURN_IF_ERROR(Send({{"jsonrpc", "2.0"},
                                    {"id", msg["id"]},
                                    {"error", {{"code", -32601}, {"message", "msp does not offer this method"}}}}));
        }
      }
      continue;
    }
    if (!msg.contains("id") || msg["id"] != id) continue;  // a stale response
    if (msg.contains("error")) {
      const json& e = msg["error"];
      const std::string text = e.is_object() ? e.value("message", e.dump()) : e.dump();
      const int code = e.is_object() ? e.value("code", 0) : 0;
      return Status::Unavailable("MCP server '" + spec_.name + "' answered " + method + " with error " +
                                 std::to_string(code) + ": " + text);
    }
    if (!msg.contains("result")) {
      return Status::Unavailable("MCP server '" + spec_.name + "' answered " + method + " without a result");
    }
    return msg["result"];
  }
}

Result<std::vector<McpTool>> McpClient::ListTools() {
  std::vector<McpTool> out;
  json params = json::object();
  for (int page = 0; page < 100; ++page) {
    MSP_ASSIGN_OR_RETURN(json result, Request("tools/list", params));
    if (!result.contains("tools") || !result["tools"].is_array()) {
      return Status::Unavailable("MCP server '" + spec_.name + "': tools/list returned no tools array");
    }
    for (const json& t : result["tools"]) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
      McpTool tool;
      tool.name = t["name"].get<std::string>();
      tool.description = t.value("description", "");
      if (t.contains("inputSchema") && t["inputSchema"].is_object()) tool.input_schema = t["inputSchema"];
      out.push_back(std::move(tool));
    }
    if (!result.contains("nextCursor") || !result["nextCursor"].is_string()) break;
    params = {{"cursor", result["nextCursor"]}};
  }
  return out;
}

Result<McpCallResult> McpClient::CallTool(const std::string& name, const json& arguments) {
  MSP_ASSIGN_OR_RETURN(json result, Request("tools/call", {{"name", name}, {"arguments", arguments}}));
  McpCallResult r;
  r.is_error = result.value("isError", false);
  if (result.contains("content") && result["content"].is_array()) {
    for (const json& item : result["content"]) {
      if (!r.text.empty()) r.text += "\n";
      const std::string type = item.is_object() ? item.value("type", "") : "";
      if (type == "text") {
        r.text += item.value("text", "");
      } else {
        r.text += "[" + (type.empty() ? std::string("unknown") : type) + " content]";
      }
    }
  }
  if (r.text.empty() && result.contains("structuredContent")) r.text = result["structuredContent"].dump();
  return r;
}

}  // namespace msp
