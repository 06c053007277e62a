// HttpServer: the HTTP shell of `msp serve`, shared by the REST API (src/rest)
// and the MCP-over-HTTP endpoint (src/mcp). Its sockets are a ConnectionLoop
// (connection_loop.h: requests read whole under deadlines, connection caps,
// a bounded queue); cpp-httplib parses and routes each request. It adds what
// every endpoint needs: a Host check on every request and an Origin and
// Content-Type check on its routes (against DNS rebinding and cross-site
// requests), API-key authentication (auth.h), a request body limit (413),
// request ids, structured JSON access logs, Prometheus metrics at /metrics,
// /healthz, 404 / 405 / 401 answers with JSON bodies, and start / stop.
//
// Routes are declared in a table (Route: method, path template, handler,
// needs_auth). Another part may also mount handlers straight on http(); it
// then authenticates with Authenticate() and calls DeclareRoute() so its
// requests are labelled in logs and metrics.
//
// Built-in routes: GET /healthz (no key), GET /metrics (a key: the record
// counts it shows are the caller's tenant's).
#ifndef MSP_SERVER_HTTP_SERVER_H_
#define MSP_SERVER_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "config/settings.h"
#include "msp/status.h"
#include "server/auth.h"
#include "server/connection_loop.h"
#include "server/content_coding.h"
#include "server/metrics.h"

namespace msp {

// What a route handler gets besides the response to fill.
struct HttpCall {
  const httplib::Request& req;
  std::string tenant;                          // from the key; "" for a route without auth
  // The key's clearance (auth.h): serve only records whose access_level is
  // at most this. nullopt: no limit (also anonymous mode).
  std::optional<int> clearance;
  std::map<std::string, std::string> params;   // path parameters by name ("id")
  std::string request_id;
};

using RouteHandler = std::function<void(const HttpCall&, httplib::Response&)>;

struct Route {
  std::string method;  // GET, POST, PUT, PATCH or DELETE
  // "/v1/memories/{id}": a {name} matches one non-empty path segment.
  std::string path;
  RouteHandler handler;
  bool needs_auth = true;  // false: no key asked (only /healthz)
};

// A registered route, for listings (the OpenAPI coverage test).
struct RouteInfo {
  std::string method;
  std::string path;
  bool needs_auth = true;
};

class HttpServer {
 public:
  // Checks the options: with no keys, options.allow_anonymous must be set and
  // options.bind must be a loopback address; allow_anonymous with keys is an
  // error too (it would be ambiguous). Errors are FailedPrecondition /
  // InvalidArgument saying which setting to change. Access logs go to `log`
  // (one JSON object a line) when options.access_log; `log` must outlive the
  // server.
  static Result<std::unique_ptr<HttpServer>> Create(const ServerOptions& options, ApiKeys keys,
                                                    std::ostream* log);
  ~HttpServer();  // stops the server
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Registers a route. REQUIRES: before Start(); no route with the same
  // method and template yet.
  void Handle(Route route);
  // Labels requests to `path` (a literal path mounted on http() directly) in
  // logs and metrics, and leaves its error answers as they are. REQUIRES:
  // before Start().
  void DeclareRoute(const std::string& path);
  // Every route registered with Handle(), built-in ones included, in order.
  std::vector<RouteInfo> Routes() const;

  // The tenant of the request's API key; "default" for any request when the
  // server runs anonymous; nullopt when the key is missing or unknown.
  std::optional<std::string> Authenticate(const httplib::Request& req) const;
  // The tenant and clearance of the request's API key (anonymous: tenant
  // "default", no clearance limit); nullopt as Authenticate.
  std::optional<ApiPrincipal> Identify(const httplib::Request& req) const;

  // Worker threads the server answers with: options.threads, or when it is
  // 0, max(kMinWorkerThreads, 8 x the hardware threads). A worker holds a
  // request only while answering it (the loop reads it first); an idle
  // thread costs no CPU.
  static int WorkerThreads(const ServerOptions& options);
  static constexpr int kMinWorkerThreads = 32;
  // How long an idle keep-alive connection is kept (sent as `Keep-Alive:
  // timeout=5, max=100`). Node's fetch (undici, under the MCP SDK's HTTP
  // transport) keeps a connection only for the advertised timeout minus 2 s,
  // and not at all when that is <= 0: at 1 s it opened a connection per
  // request.
  static constexpr int kKeepAliveSeconds = 5;
  // Requests on one connection before the server answers `Connection: close`.
  static constexpr int kKeepAliveMaxRequests = 100;

  // The underlying server, for mounting other endpoints (MCP at /mcp).
  httplib::Server& http() { return http_; }
  HttpMetrics& metrics() { return metrics_; }
  const ServerOptions& options() const { return options_; }

  // Extra text appended to /metrics for the caller's tenant, as its key's
  // clearance sees it (record counts).
  // REQUIRES: before Start().
  void SetMetricsSource(std::function<std::string(const std::string& tenant, std::optional<int> clearance)> source);
  // What /healthz checks besides the server itself (the store): while it
  // fails, /healthz answers 503 {"status": "unavailable", "store": "down",
  // "error": its status code name}; otherwise 200 {"status": "ok", "store":
  // "up"}. Two failures mean the store is up but refuses writes: ReadOnly
  // answers 200 with "writes": "read_only", DiskFull 507 {"status":
  // "disk_full", "store": "up", "writes": "disk_full", "message": ...}.
  // REQUIRES: before Start().
  void SetHealthSource(std::function<Status()> probe);

  // Binds options.bind:options.port (port 0: any free port) and serves on
  // threads of its own. Returns the bound port once the server accepts
  // connections. Unavailable when the address cannot be bound.
  Result<int> Start();
  // Stops accepting, closes connections not being answered, lets requests
  // in flight finish, joins the threads. Idempotent.
  void Stop();
  // The bound port (0 before Start).
  int port() const { return port_; }
  // True from Start to Stop: a streamed answer (server-sent events) checks
  // it between writes and ends when it turns false, so Stop does not wait
  // on open streams.
  bool serving() const { return serving_; }

 private:
  HttpServer(const ServerOptions& options, ApiKeys keys, std::ostream* log);
  // cpp-httplib's server, answering requests the loop has read.
  class Router : public httplib::Server {
   public:
    // Parses, routes and answers the one request `in` holds. True when the
    // connection may stay open.
    bool Answer(httplib::Stream& in, const RequestFacts& facts);
    // cpp-httplib writes a streamed answer (a content provider) only while
    // its listening socket is valid, and this server never listens: Start
    // marks it serving, Stop not, which ends every stream after its
    // provider's current call.
    void SetServing(bool serving) { svr_sock_ = serving ? 0 : INVALID_SOCKET; }
  };
  struct CompiledRoute {
    RouteInfo info;
    std::regex pattern;
    std::vector<std::string> param_names;
  };

  void InstallHooks();
  // The template of the route matching `method` and `path` ("" if none), and
  // the methods of every route matching `path`.
  std::string RouteLabel(const std::string& method, const std::string& path) const;
  std::vector<std::string> MethodsFor(const std::string& path) const;
  bool IsDeclared(const std::string& path) const;
  // Encodes `res` with gzip when content_coding.h says so (the
  // post-routing hook: after the handler, before the answer is written).
  void EncodeAnswer(const httplib::Request& req, httplib::Response& res) const;
  void AccessLog(const httplib::Request& req, const httplib::Response& res, const std::string& route,
                 double ms, const std::string& request_id) const;

  ServerOptions options_;
  Compression compression_ = Compression::kRemote;  // options_.compression
  ApiKeys keys_;
  std::ostream* log_;
  mutable std::mutex log_mu_;
  Router http_;
  HttpMetrics metrics_;
  std::vector<CompiledRoute> routes_;
  std::vector<std::string> declared_;
  std::function<std::string(const std::string&, std::optional<int>)> metrics_source_;
  std::function<Status()> health_source_;
  std::unique_ptr<ConnectionLoop> loop_;
  int port_ = 0;
  std::atomic<bool> serving_{false};
};

// Response helpers: a JSON body, and an error in the shape of http_status.h.
void SendJson(httplib::Response& res, int status, const nlohmann::json& body);
void SendStatusError(httplib::Response& res, const Status& status);
void SendError(httplib::Response& res, int http_status, std::string_view code, std::string_view message);

// The limits of options (server.* settings) for the loop.
ConnectionLimits LimitsOf(const ServerOptions& options);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackAddress(const std::string& address);

}  // namespace msp

#endif  // MSP_SERVER_HTTP_SERVER_H_
