// The pieces of the REST route table shared by its two halves (internal to
// src/rest): rest_api.cc (records, search, sessions, facts, import / export)
// and mission_routes.cc (mission memory: query, decisions, corrections,
// handoff, usage marks, principles, reports).
//
// A route is a row {method, path template, body kind, tenant fields, query
// parameters, handler}; the routes of src/api's operations are made from the
// operation table. The generic part (rest_api.cc) checks the query
// parameter names, parses the body, refuses requests naming another tenant
// (403), calls the handler and writes its Reply or maps its Status to HTTP
// (server/http_status.h).
#ifndef MSP_REST_REST_ROUTE_H_
#define MSP_REST_REST_ROUTE_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/operation.h"
#include "msp/caller.h"
#include "msp/digest.h"
#include "msp/memory.h"
#include "rest/request_json.h"
#include "rest/rest_api.h"
#include "server/http_server.h"

namespace msp {

// What a handler answers: JSON, or text of its own content type.
struct RestReply {
  int status = 200;
  nlohmann::json body;
  std::string text;
  std::string content_type;  // set: `text` is the body

  static RestReply Json(int status, nlohmann::json body) { return RestReply{status, std::move(body), "", ""}; }
  // `text`, already written, sent as it is with `content_type`.
  static RestReply Text(int status, std::string text, std::string content_type) {
    return RestReply{status, nlohmann::json(), std::move(text), std::move(content_type)};
  }
};

// The parsed request a handler works from.
struct RestRequest {
  const HttpCall& call;
  QueryParams query;
  nlohmann::json body;  // for routes with a JSON body ({} when optional and absent)
  // Who calls: the key's tenant and clearance, the API's actor.
  Caller caller;
  // The engine as the caller (AsCaller): every handler reads and writes
  // through it, so the engine enforces the key's tenant and clearance.
  std::unique_ptr<MemoryLayer> layer;

  const std::string& tenant() const { return call.tenant; }
  // The key's clearance; nullopt: no limit.
  std::optional<int> clearance() const { return call.clearance; }
  MemoryLayer& engine() const { return *layer; }
  const std::string& param(const std::string& name) const { return call.params.at(name); }
};

// The engine and what the handlers share. Thread-safe.
class RestApi {
 public:
  RestApi(MemoryLayer& engine, RestOptions options);

  MemoryLayer& engine() { return engine_; }
  const std::string& actor() const { return options_.actor; }
  const RestOptions& options() const { return options_; }

  // A tenant's Stats as seen with `clearance` (nullopt: everything), at most
  // stats_cache_ms old.
  Result<Stats> CachedStats(const std::string& tenant, std::optional<int> clearance);

  // The mission retrieval interface over `layer` (a request's caller
  // layer), or why it could not be set up (the token counter of tokens.*,
  // e.g. cl100k without its vocabulary).
  Result<std::unique_ptr<WorkflowMemory>> Workflow(MemoryLayer& layer);

 private:
  MemoryLayer& engine_;
  RestOptions options_;
  std::unique_ptr<WorkflowMemory> workflow_;
  Status workflow_status_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::optional<int>>, std::pair<std::chrono::steady_clock::time_point, Stats>> stats_;
};

enum class BodyKind {
  kNone,          // the body is ignored
  kJson,          // a JSON object is required
  kOptionalJson,  // a JSON object, or no body at all ({})
  kJsonl,         // JSON Lines (import)
};

using RestHandler = Result<RestReply> (*)(RestApi&, const RestRequest&);

struct RestRoute {
  const char* method;
  const char* path;
  BodyKind body;
  // Body fields that may name a tenant ("memories[].namespace.tenant").
  std::vector<std::string> tenant_fields;
  // Query parameters the route reads ("tenant" is always allowed).
  std::vector<std::string> params;
  RestHandler handler;
  // Set: the route of this src/api operation, which decodes the body with
  // its field table (and `handler` is null).
  const api::Operation* operation = nullptr;
};

// The mission-memory routes (mission_routes.cc).
std::vector<RestRoute> MissionRoutes();
// GET /v1/events/stream, server-sent events of the change sequence
// (event_stream.cc): a streamed answer, so a route of its own outside the
// table.
void MountEventStream(HttpServer& server, MemoryLayer& engine, const RestOptions& options);

// 403 for a key whose clearance is limited, on a route that reads or writes
// the whole tenant regardless of access levels (audit, import, reports).
RestReply ClearanceForbidden(const std::string& what, int clearance);


}  // namespace msp

#endif  // MSP_REST_REST_ROUTE_H_
