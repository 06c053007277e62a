// HttpServer: routing table, Host / Origin / Content-Type checks,
// authentication, limits, logs and metrics over cpp-httplib, on a
// ConnectionLoop's sockets.
#include "server/http_server.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <thread>

#include "server/content_coding.h"
#include "server/http_status.h"
#include "util/text.h"
#include "util/time.h"
#include "util/uuid.h"
#include "util/web_origin.h"

namespace msp {
namespace {

using Clock = std::chrono::steady_clock;

// What the hooks of one request share. cpp-httplib runs the pre-routing
// hook, the handler, the error handler and the logger of a request on one
// worker thread, so a thread-local carries it from the first to the last.
struct RequestScratch {
  bool active = false;  // set by the pre-routing hook
  Clock::time_point start;
  std::string request_id;
  std::string route;  // the template, once a table route matched
};

RequestScratch& Scratch() {
  thread_local RequestScratch scratch;
  return scratch;
}

// Whether the request this thread answers accepts gzip (RequestFacts; the
// header itself reaches cpp-httplib blanked): set by Router::Answer, read
// by EncodeAnswer.
thread_local bool t_accepts_gzip = false;

// A client's X-Request-Id is kept when it is 1..64 characters of
// [A-Za-z0-9._-]; otherwise a new id is made.
std::string RequestIdFor(const httplib::Request& req) {
  const std::string given = req.get_header_value("X-Request-Id");
  const bool sane = !given.empty() && given.size() <= 64 && std::all_of(given.begin(), given.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  if (sane) return given;
  return NewUuid(std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
}

// "/v1/memories/{id}" -> "^/v1/memories/([^/]+)$" and the names {"id"}.
std::string TemplateRegex(const std::string& path, std::vector<std::string>* names) {
  std::string re = "^";
  for (size_t i = 0; i < path.size();) {
    if (path[i] == '{') {
      const size_t close = path.find('}', i);
      names->push_back(path.substr(i + 1, close - i - 1));
      re += "([^/]+)";
      i = close + 1;
      continue;
    }
    const char c = path[i];
    if (std::string_view(".^$|()[]*+?\\{}").find(c) != std::string_view::npos) re += '\\';
    re += c;
    ++i;
  }
  return re + "$";
}

const char* ReasonCode(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 411: return "length_required";
    case 415: return "unsupported_media_type";
    case 413: return "payload_too_large";
    case 414: return "uri_too_long";
    case 416: return "range_not_satisfiable";
    default: return status >= 500 ? "internal" : "error";
  }
}

// True when a request carries a body that is not JSON (application/json,
// or JSON lines as application/x-ndjson): a browser sends text/plain, form
// and multipart bodies cross-site without asking first (a "simple"
// request), and a fetch() of a Blob sends no type at all. Read before the
// body is parsed: cpp-httplib parses a multipart body itself.
bool BodyIsNotJson(const httplib::Request& req) {
  const std::string length = req.get_header_value("Content-Length");
  if (length.empty() || length.find_first_not_of('0') == std::string::npos) return false;
  const std::string type = MediaTypeOf(req.get_header_value("Content-Type"));
  return type != "application/json" && type != "application/x-ndjson";
}

// True when the request's Origin is the origin it was sent to (scheme
// http or https, the Host header's host and port, without case): a page
// this server served calling it back.
bool SameOrigin(const httplib::Request& req) {
  if (!req.has_header("Host")) return false;
  const std::string origin = AsciiLower(req.get_header_value("Origin"));
  const std::string host = AsciiLower(req.get_header_value("Host"));
  return !host.empty() && (origin == "http://" + host || origin == "https://" + host);
}

void SendUnauthorized(httplib::Response& res) {
  res.set_header("WWW-Authenticate", "Bearer");
  SendError(res, 401, "unauthorized",
            "a valid API key is required: send `Authorization: Bearer KEY` or `X-API-Key: KEY`");
}

}  // namespace

void SendJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void SendStatusError(httplib::Response& res, const Status& status) {
  SendJson(res, HttpStatusFor(status), StatusErrorJson(status));
  if (status.code() == StatusCode::kUnavailable) res.set_header("Retry-After", "1");
}

void SendError(httplib::Response& res, int http_status, std::string_view code, std::string_view message) {
  SendJson(res, http_status, ErrorJson(code, message));
}

ConnectionLimits LimitsOf(const ServerOptions& options) {
  ConnectionLimits l;
  l.header_timeout = std::chrono::milliseconds(options.header_timeout_ms);
  l.body_timeout = std::chrono::milliseconds(options.body_timeout_ms);
  l.keep_alive = std::chrono::seconds(HttpServer::kKeepAliveSeconds);
  l.max_body_bytes = options.max_body_bytes;
  l.max_connections = options.max_connections;
  l.max_connections_per_client = options.max_connections_per_client;
  l.max_queued_requests = options.max_queued_requests;
  l.keep_alive_max_requests = HttpServer::kKeepAliveMaxRequests;
  l.workers = HttpServer::WorkerThreads(options);
  return l;
}

bool HttpServer::Router::Answer(httplib::Stream& in, const RequestFacts& facts) {
  bool closed = false;
  t_accepts_gzip = facts.accepts_gzip;
  const bool ok = process_request(in, facts.close_connection, closed, nullptr);
  t_accepts_gzip = false;
  return ok && !closed;
}

void HttpServer::EncodeAnswer(const httplib::Request& req, httplib::Response& res) const {
  // A streamed answer (no body here), a range, or one encoded already.
  if (res.body.empty() || res.status == 206 || res.has_header("Content-Encoding") || res.has_header("Content-Range")) {
    return;
  }
  if (!MayGzip(compression_, res.get_header_value("Content-Type"), res.body.size())) return;
  // The same URL may come back encoded or not, by the request's header.
  res.set_header("Vary", "Accept-Encoding");
  if (!GzipsFor(compression_, t_accepts_gzip, req.remote_addr)) return;
  std::string encoded;
  if (!Gzip(res.body, &encoded) || encoded.size() >= res.body.size()) return;
  res.body.swap(encoded);
  res.headers.erase("Content-Length");
  res.set_header("Content-Length", std::to_string(res.body.size()));
  res.set_header("Content-Encoding", "gzip");
  // A strong tag names these bytes exactly; the encoded ones are another
  // representation of the same content.
  const std::string etag = res.get_header_value("ETag");
  if (!etag.empty() && etag.rfind("W/", 0) != 0) {
    res.headers.erase("ETag");
    res.set_header("ETag", "W/" + etag);
  }
}

bool IsLoopbackAddress(const std::string& address) {
  return address == "localhost" || address == "[::1]" || IsLoopbackPeer(address);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(const ServerOptions& options, ApiKeys keys,
                                                       std::ostream* log) {
  if (keys.empty() && !options.allow_anonymous) {
    return Status::FailedPrecondition(
        "no API keys are configured: set server.api_keys (KEY=TENANT entries, a KEY of 16 characters or more, "
        "e.g. `openssl rand -hex 16`; --api-keys, MSP_API_KEYS) or "
        "server.api_keys_file, or set server.allow_anonymous = true to serve tenant default without keys "
        "(loopback bind only)");
  }
  if (!keys.empty() && options.allow_anonymous) {
    return Status::InvalidArgument(
        "server.allow_anonymous is set but API keys are configured too: choose one (anonymous access "
        "would bypass the keys)");
  }
  if (keys.empty() && !IsLoopbackAddress(options.bind)) {
    return Status::FailedPrecondition("server.allow_anonymous serves only a loopback address, but server.bind is '" +
                                      options.bind + "': bind 127.0.0.1 or configure API keys");
  }
  if (!CompressionFromName(options.compression)) {
    return Status::InvalidArgument("server.compression is '" + options.compression +
                                   "': use remote (gzip for clients not on loopback), all or off");
  }
  std::unique_ptr<HttpServer> server(new HttpServer(options, std::move(keys), log));
  return server;
}

HttpServer::HttpServer(const ServerOptions& options, ApiKeys keys, std::ostream* log)
    : options_(options),
      compression_(CompressionFromName(options.compression).value_or(Compression::kRemote)),
      keys_(std::move(keys)),
      log_(log) {
  http_.set_payload_max_length(options_.max_body_bytes);
  // What the answers' Keep-Alive header says; the loop keeps to it.
  http_.set_keep_alive_max_count(kKeepAliveMaxRequests);
  http_.set_keep_alive_timeout(kKeepAliveSeconds);
  InstallHooks();
  Handle({"GET", "/healthz",
          [this](const HttpCall&, httplib::Response& res) {
            if (!health_source_) return SendJson(res, 200, {{"status", "ok"}});
            const Status store = health_source_();
            if (store.ok()) return SendJson(res, 200, {{"status", "ok"}, {"store", "up"}});
            // Up, but writes are refused: reads still work.
            if (store.code() == StatusCode::kReadOnly) {
              return SendJson(res, 200, {{"status", "ok"}, {"store", "up"}, {"writes", "read_only"}});
            }
            if (store.code() == StatusCode::kDiskFull) {
              return SendJson(res, 507, {{"status", "disk_full"},
                                         {"store", "up"},
                                         {"writes", "disk_full"},
                                         {"message", "the disk holding the store is full: writes fail until space "
                                                     "is freed (reads work)"}});
            }
            // The code only: /healthz needs no key, and the message names the database.
            SendJson(res, 503, {{"status", "unavailable"}, {"store", "down"}, {"error", StatusCodeName(store.code())}});
          },
          false});
  Handle({"GET", "/metrics", [this](const HttpCall& call, httplib::Response& res) {
            std::string text = metrics_.Render();
            if (metrics_source_) text += metrics_source_(call.tenant, call.clearance);
            res.status = 200;
            res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
          }});
}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::WorkerThreads(const ServerOptions& options) {
  if (options.threads > 0) return options.threads;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(kMinWorkerThreads, 8 * cores);
}

void HttpServer::InstallHooks() {
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    RequestScratch& s = Scratch();
    s = RequestScratch{};
    s.active = true;
    s.start = Clock::now();
    s.request_id = RequestIdFor(req);
    res.set_header("X-Request-Id", s.request_id);
    // DNS rebinding: a page of evil.example whose name now resolves to this
    // machine sends Host: evil.example. A request without Host (HTTP/1.0,
    // not a browser) is let through.
    if (req.has_header("Host") && !HostAllowed(req.get_header_value("Host"), options_.bind, options_.allowed_hosts)) {
      SendError(res, 403, "forbidden",
                "Host '" + req.get_header_value("Host") +
                    "' does not name this server: use its address, or add the name to server.allowed_hosts");
      return httplib::Server::HandlerResponse::Handled;
    }
    // cpp-httplib reads a chunked body whole, whatever its size: only bodies
    // with a Content-Length (checked against the limit before reading) are
    // accepted. The connection is closed after the answer, since the body is
    // left unread.
    std::string encoding = req.get_header_value("Transfer-Encoding");
    std::transform(encoding.begin(), encoding.end(), encoding.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (encoding.find("chunked") != std::string::npos) {
      res.set_header("Connection", "close");
      SendError(res, 411, "length_required",
                "send the request body with a Content-Length header; chunked request bodies are not accepted");
      return httplib::Server::HandlerResponse::Handled;
    }
    // Endpoints mounted apart (/mcp) check Origin and type themselves.
    if (IsDeclared(req.path)) return httplib::Server::HandlerResponse::Unhandled;
    // A cross-site request: a browser names the page's origin. The
    // server's own pages (the console at /ui) are same-origin: their
    // Origin is the Host the request was sent to, already checked above.
    if (req.has_header("Origin") && !SameOrigin(req) &&
        !OriginAllowed(req.get_header_value("Origin"), options_.allowed_origins)) {
      SendError(res, 403, "forbidden",
                "origin '" + req.get_header_value("Origin") +
                    "' is not allowed: add it to server.allowed_origins; nothing was done");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (BodyIsNotJson(req)) {
      SendError(res, 415, "unsupported_media_type",
                "send the request body as Content-Type: application/json (JSON lines: application/x-ndjson); "
                "nothing was done");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // Answers httplib's own errors (no route, body too large, bad request)
  // with JSON; leaves answers that already have a body alone.
  http_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                       httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    RequestScratch& s = Scratch();
    if (res.status == 404 && s.route.empty()) {
      if (IsDeclared(req.path)) return httplib::Server::HandlerResponse::Unhandled;
      // Without a valid key, no route is confirmed or denied.
      if (!Authenticate(req)) {
        SendUnauthorized(res);
        return httplib::Server::HandlerResponse::Handled;
      }
      const std::vector<std::string> methods = MethodsFor(req.path);
      if (!methods.empty()) {
        std::string allow;
        for (const std::string& m : methods) allow += (allow.empty() ? "" : ", ") + m;
        res.set_header("Allow", allow);
        SendError(res, 405, "method_not_allowed", req.method + " is not allowed on " + req.path + "; allowed: " + allow);
      } else {
        SendError(res, 404, "not_found", "no route " + req.method + " " + req.path + " (the API is listed at /openapi.json)");
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    if (res.status == 413) {
      SendError(res, 413, "payload_too_large",
                "the request body is larger than server.max_body_bytes (" + std::to_string(options_.max_body_bytes) +
                    " bytes); nothing was done");
      return httplib::Server::HandlerResponse::Handled;
    }
    const int status = res.status;
    SendError(res, status, ReasonCode(status), "HTTP " + std::to_string(status));
    return httplib::Server::HandlerResponse::Handled;
  }));

  http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendError(res, 500, "internal", "internal error: " + what);
  });

  http_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    EncodeAnswer(req, res);
    // A body in memory is the whole answer (a streamed one has none yet):
    // its head and body leave together.
    if (!res.body.empty()) HoldAnswerHead();
  });

  http_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    RequestScratch& s = Scratch();
    const double ms =
        s.active ? std::chrono::duration<double, std::milli>(Clock::now() - s.start).count() : 0.0;
    std::string route = s.route;
    if (route.empty()) route = RouteLabel(req.method, req.path);
    if (route.empty()) route = IsDeclared(req.path) ? req.path : "unmatched";
    metrics_.Record(req.method, route, res.status, ms / 1000.0);
    if (options_.access_log && log_ != nullptr) AccessLog(req, res, route, ms, s.request_id);
    s = RequestScratch{};
  });
}

void HttpServer::AccessLog(const httplib::Request& req, const httplib::Response& res, const std::string& route,
                           double ms, const std::string& request_id) const {
  const std::optional<std::string> tenant = Authenticate(req);
  nlohmann::json line = {
      {"time", FormatIso8601(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count())},
      {"method", req.method},
      {"route", route},
      {"path", req.path},
      {"status", res.status},
      {"duration_ms", static_cast<double>(static_cast<int64_t>(ms * 1000.0)) / 1000.0},
      {"tenant", tenant ? nlohmann::json(*tenant) : nlohmann::json(nullptr)},
      {"request_id", request_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(request_id)},
      {"remote", req.remote_addr},
      {"bytes_in", req.body.size()},
      {"bytes_out", res.body.size()},
  };
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard<std::mutex> lock(log_mu_);
  *log_ << text << "\n";
  log_->flush();
}

void HttpServer::Handle(Route route) {
  CompiledRoute compiled;
  compiled.info = RouteInfo{route.method, route.path, route.needs_auth};
  const std::string re = TemplateRegex(route.path, &compiled.param_names);
  compiled.pattern = std::regex(re);
  routes_.push_back(compiled);

  auto shared = std::make_shared<Route>(std::move(route));
  auto names = std::make_shared<std::vector<std::string>>(compiled.param_names);
  httplib::Server::Handler wrapped = [this, shared, names](const httplib::Request& req, httplib::Response& res) {
    RequestScratch& s = Scratch();
    s.route = shared->path;
    // cpp-httplib enforces the limit on bodies with a length; a chunked body
    // is checked here.
    if (req.body.size() > options_.max_body_bytes) {
      SendError(res, 413, "payload_too_large",
                "the request body is larger than server.max_body_bytes (" + std::to_string(options_.max_body_bytes) +
                    " bytes); nothing was done");
      return;
    }
    HttpCall call{req, "", std::nullopt, {}, s.request_id};
    if (shared->needs_auth) {
      std::optional<ApiPrincipal> tenant = Identify(req);
      if (!tenant) {
        SendUnauthorized(res);
        return;
      }
      call.tenant = tenant->tenant;
      call.clearance = tenant->clearance;
    }

    for (size_t i = 0; i < names->size() && i + 1 < req.matches.size(); ++i) {
      call.params[(*names)[i]] = req.matches[i + 1].str();
    }
    shared->handler(call, res);
  };
  const std::string& m = shared->method;
  if (m == "GET") {
    http_.Get(re, wrapped);
  } else if (m == "POST") {
    http_.Post(re, wrapped);
  } else if (m == "PUT") {
    http_.Put(re, wrapped);
  } else if (m == "PATCH") {
    http_.Patch(re, wrapped);
  } else if (m == "DELETE") {
    http_.Delete(re, wrapped);
  }
}

void HttpServer::DeclareRoute(const std::string& path) { declared_.push_back(path); }

std::vector<RouteInfo> HttpServer::Routes() const {
  std::vector<RouteInfo> out;
  for (const CompiledRoute& r : routes_) out.push_back(r.info);
  return out;
}

std::optional<std::string> HttpServer::Authenticate(const httplib::Request& req) const {
  std::optional<ApiPrincipal> p = Identify(req);
  if (!p) return std::nullopt;
  return p->tenant;
}

std::optional<ApiPrincipal> HttpServer::Identify(const httplib::Request& req) const {
  if (keys_.empty()) {
    if (options_.allow_anonymous) return ApiPrincipal{"default", std::nullopt};
    return std::nullopt;
  }
  return keys_.PrincipalFor(RequestApiKey(req));
}

void HttpServer::SetMetricsSource(std::function<std::string(const std::string&, std::optional<int>)> source) {
  metrics_source_ = std::move(source);
}

void HttpServer::SetHealthSource(std::function<Status()> probe) { health_source_ = std::move(probe); }

std::string HttpServer::RouteLabel(const std::string& method, const std::string& path) const {
  for (const CompiledRoute& r : routes_) {
    if ((r.info.method == method || (method == "HEAD" && r.info.method == "GET")) &&
        std::regex_match(path, r.pattern)) {
      return r.info.path;
    }
  }
  return "";
}

std::vector<std::string> HttpServer::MethodsFor(const std::string& path) const {
  std::vector<std::string> out;
  for (const CompiledRoute& r : routes_) {
    if (std::regex_match(path, r.pattern) &&
        std::find(out.begin(), out.end(), r.info.method) == out.end()) {
      out.push_back(r.info.method);
    }
  }
  return out;
}

bool HttpServer::IsDeclared(const std::string& path) const {
  return std::find(declared_.begin(), declared_.end(), path) != declared_.end();
}

Result<int> HttpServer::Start() {
  if (loop_) return Status::FailedPrecondition("the server is already running");
  auto loop = std::make_unique<ConnectionLoop>(
      LimitsOf(options_), [this](httplib::Stream& in, const RequestFacts& facts) { return http_.Answer(in, facts); },
      [this](DropReason reason) { metrics_.CountDroppedConnection(DropReasonName(reason)); });
  Result<int> port = loop->Start(options_.bind, options_.port);
  if (!port.ok()) return port.status();
  loop_ = std::move(loop);
  port_ = *port;
  http_.SetServing(true);
  serving_ = true;
  return port;
}

void HttpServer::Stop() {
  if (!loop_) return;
  serving_ = false;
  http_.SetServing(false);
  loop_->Stop();
  loop_.reset();
}

}  // namespace msp
