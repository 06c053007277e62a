// The Streamable HTTP transport (see mcp_http.h).
#include "mcp/mcp_http.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>

#include "codec/memory_json.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp_server.h"
#include "util/text.h"
#include "util/web_origin.h"

namespace msp::mcp {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kSessionHeader[] = "Mcp-Session-Id";
constexpr char kVersionHeader[] = "MCP-Protocol-Version";
// The error code the MCP SDKs use for an unknown session.
constexpr int kSessionNotFound = -32001;

std::string NewSessionId() {
  std::random_device rd;  // /dev/urandom on Linux
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 4; ++i) {
    uint32_t v = rd();
    for (int k = 0; k < 8; ++k, v >>= 4) id += kHex[v & 0xF];
  }
  return id;
}

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

void SendError(httplib::Response& res, int status, int code, const std::string& message,
               const json& id = nullptr) {
  SendJson(res, status, MakeError(id, code, message));
}

McpServerOptions ServerOptions(const McpHttpOptions& o) {
  McpServerOptions s;
  s.server_version = o.server_version;
  s.options.mcp = o.mcp;
  s.options.mission = o.mission;
  s.options.tokens = o.tokens;
  s.options.policy = o.policy;
  return s;
}

struct SessionEntry {
  std::mutex mu;
  McpSession session;
  Clock::time_point last_used;
};

// The state behind one mount: the protocol core and the open sessions.
class McpHttpEndpoint {
 public:
  McpHttpEndpoint(MemoryLayer& engine, McpHttpOptions options, McpAuthenticator authenticate)
      : server_(engine, ServerOptions(options)),
        options_(std::move(options)),
        authenticate_(std::move(authenticate)) {}

  void Post(const httplib::Request& req, httplib::Response& res);
  void Delete(const httplib::Request& req, httplib::Response& res);

  // Common checks of every request: Origin, then credentials. Returns false
  // (with the response filled) when the request is refused.
  bool Admit(const httplib::Request& req, httplib::Response& res, McpCaller* caller);

 private:
  // The live session named by the request's header, or null with the
  // response filled (400 or 404).
  std::shared_ptr<SessionEntry> FindSession(const httplib::Request& req, const McpCaller& caller,
                                            httplib::Response& res);
  void Initialize(const JsonRpcMessage& m, const McpCaller& caller, httplib::Response& res);
  // Drops sessions idle too long. REQUIRES: mu_ held.
  void ExpireIdleLocked(Clock::time_point now);

  McpServer server_;
  McpHttpOptions options_;
  McpAuthenticator authenticate_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<SessionEntry>> sessions_;
};

bool McpHttpEndpoint::Admit(const httplib::Request& req, httplib::Response& res, McpCaller* caller) {
  if (req.has_header("Origin")) {
    const std::string origin = req.get_header_value("Origin");
    if (!OriginAllowed(origin, options_.mcp.allowed_origins)) {
      SendError(res, 403, kInvalidRequest,
                "Forbidden: origin '" + origin + "' is not allowed (add it to mcp.allowed_origins)");
      return false;
    }
  }
  caller->tenant = options_.base_namespace.tenant;
  caller->actor = "mcp";
  if (authenticate_) {
    Result<McpCaller> who = authenticate_(req);
    if (!who.ok()) {
      res.set_header("WWW-Authenticate", "Bearer");
      SendError(res, 401, kInvalidRequest, "Unauthorized: " + who.status().message());
      return false;
    }
    *caller = *who;
    if (caller->actor.empty()) caller->actor = "mcp";
    if (caller->tenant.empty()) {
      SendError(res, 401, kInvalidRequest, "Unauthorized: the credentials name no tenant");
      return false;
    }
  }
  return true;
}

void McpHttpEndpoint::ExpireIdleLocked(Clock::time_point now) {
  const auto idle = std::chrono::seconds(options_.session_idle_seconds);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second->last_used > idle) {
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<SessionEntry> McpHttpEndpoint::FindSession(const httplib::Request& req, const McpCaller& caller,
                                                           httplib::Response& res) {
  if (!req.has_header(kSessionHeader)) {
    SendError(res, 400, kInvalidRequest,
              "Bad Request: Mcp-Session-Id header is required (initialize returns it)");
    return nullptr;
  }
  const std::string id = req.get_header_value(kSessionHeader);
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  ExpireIdleLocked(now);
  auto it = sessions_.find(id);
  // Another tenant's session is as unknown as one that never was; so is one
  // opened by a key of another clearance.
  if (it == sessions_.end() || it->second->session.ns.tenant != caller.tenant ||
      it->second->session.clearance != caller.clearance) {
    SendError(res, 404, kSessionNotFound, "Session not found: it ended or never existed; initialize a new one");
    return nullptr;
  }
  it->second->last_used = now;
  return it->second;
}

void McpHttpEndpoint::Initialize(const JsonRpcMessage& m, const McpCaller& caller, httplib::Response& res) {
  auto entry = std::make_shared<SessionEntry>();
  entry->session.ns = options_.base_namespace;
  entry->session.ns.tenant = caller.tenant;
  entry->session.actor = caller.actor;
  entry->session.clearance = caller.clearance;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ExpireIdleLocked(Clock::now());
    if (sessions_.size() >= options_.max_sessions) {
      SendError(res, 503, kInternalError, "Service Unavailable: too many open MCP sessions; try again later",
                m.id);
      return;
    }
  }
  std::optional<json> reply = server_.HandleMessage(entry->session, m);
  if (!reply) {
    res.status = 202;
    return;
  }
  if (reply->contains("result")) {
    entry->session.id = NewSessionId();
    entry->last_used = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      sessions_[entry->session.id] = entry;
    }
    res.set_header(kSessionHeader, entry->session.id);
  }
  SendJson(res, 200, *reply);
}

void McpHttpEndpoint::Post(const httplib::Request& req, httplib::Response& res) {
  McpCaller caller;
  if (!Admit(req, res, &caller)) return;
  if (req.body.size() > options_.max_body_bytes) {
    SendError(res, 413, kInvalidRequest,
              "Payload Too Large: at most " + std::to_string(options_.max_body_bytes) + " bytes a message");
    return;
  }
  const std::string type = AsciiLower(req.get_header_value("Content-Type"));
  if (type.rfind("application/json", 0) != 0) {
    SendError(res, 415, kInvalidRequest, "Unsupported Media Type: POST a JSON-RPC message as application/json");
    return;
  }
  if (req.has_header("Accept")) {
    const std::string accept = AsciiLower(req.get_header_value("Accept"));
    if (accept.find("application/json") == std::string::npos && accept.find("*/*") == std::string::npos &&
        accept.find("application/*") == std::string::npos) {
      SendError(res, 406, kInvalidRequest, "Not Acceptable: msp replies with application/json");
      return;
    }
  }
  if (req.has_header(kVersionHeader)) {
    const std::string version = req.get_header_value(kVersionHeader);
    const auto& supported = SupportedProtocolVersions();
    if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
      SendError(res, 400, kInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version '" + version + "'");
      return;
    }
  }
  ParsedMessage parsed = ParseJsonRpc(req.body);
  if (!parsed.message) {
    if (parsed.error_reply.is_null()) {
      res.status = 202;  // a malformed notification: nothing to answer
    } else {
      SendJson(res, 400, parsed.error_reply);
    }
    return;
  }
  const JsonRpcMessage& m = *parsed.message;
  if (m.type == MessageType::kRequest && m.method == "initialize") {
    Initialize(m, caller, res);
    return;
  }
  std::shared_ptr<SessionEntry> entry = FindSession(req, caller, res);
  if (!entry) return;
  McpSession snapshot;
  {
    std::lock_guard<std::mutex> lock(entry->mu);
    snapshot = entry->session;
  }
  std::optional<std::string> reply = server_.HandleMessageText(snapshot, m);
  if (m.type == MessageType::kNotification && snapshot.initialized) {
    std::lock_guard<std::mutex> lock(entry->mu);
    entry->session.initialized = true;
  }
  if (!reply) {
    res.status = 202;
    return;
  }
  res.status = 200;
  res.set_content(*reply, "application/json");
}

void McpHttpEndpoint::Delete(const httplib::Request& req, httplib::Response& res) {
  McpCaller caller;
  if (!Admit(req, res, &caller)) return;
  std::shared_ptr<SessionEntry> entry = FindSession(req, caller, res);
  if (!entry) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(entry->session.id);
  }
  res.status = 204;
}

}  // namespace

Status MountMcpHttp(httplib::Server& http, MemoryLayer& engine, const McpHttpOptions& options,
                    McpAuthenticator authenticate) {
  if (options.path.empty() || options.path[0] != '/') {
    return Status::InvalidArgument("MCP HTTP path must start with '/', got '" + options.path + "'");
  }
  if (options.max_sessions == 0 || options.session_idle_seconds <= 0) {
    return Status::InvalidArgument("MCP HTTP needs max_sessions >= 1 and session_idle_seconds >= 1");
  }
  auto endpoint = std::make_shared<McpHttpEndpoint>(engine, options, std::move(authenticate));
  http.Post(options.path, [endpoint](const httplib::Request& req, httplib::Response& res) {
    try {
      endpoint->Post(req, res);
    } catch (const std::exception& e) {
      SendError(res, 500, kInternalError, std::string("Internal error: ") + e.what());
    }
  });
  http.Delete(options.path, [endpoint](const httplib::Request& req, httplib::Response& res) {
    try {
      endpoint->Delete(req, res);
    } catch (const std::exception& e) {
      SendError(res, 500, kInternalError, std::string("Internal error: ") + e.what());
    }
  });
  http.Get(options.path, [endpoint](const httplib::Request& req, httplib::Response& res) {
    McpCaller caller;
    if (!endpoint->Admit(req, res, &caller)) return;
    res.set_header("Allow", "POST, DELETE");
    SendError(res, 405, kInvalidRequest,
              "Method Not Allowed: msp sends no server-initiated messages; POST requests to this endpoint");
  });
  return Status::Ok();
}

}  // namespace msp::mcp
