// The REST API of msp: /v1 routes over the engine (MemoryLayer), JSON in and
// out, mounted on an HttpServer (src/server). A thin face: each handler reads
// its request, makes one engine call and writes the answer; errors map to
// HTTP in one place (server/http_status.h).
//
// The tenant of every call is the API key's: a body or query that names
// another tenant is refused with 403 (naming the own tenant is allowed, and
// leaving it out is the norm). The other namespace parts (user, agent,
// session, mission, operator) come from the request. A key with a clearance
// (server/auth.h) is served only records at or below it: lists and searches
// filter, a record above it reads as 404, and the routes that span the whole
// tenant whatever the access level (audit, import, reports) answer 403. docs/rest.md describes
// the routes; docs/openapi.json (served at /openapi.json) is their contract.
#ifndef MSP_REST_REST_API_H_
#define MSP_REST_REST_API_H_

#include <string>
#include <string_view>

#include "msp/memory.h"
#include "msp/options.h"
#include "orchestrate/orchestrator.h"
#include "server/http_server.h"

namespace msp {

struct RestOptions {
  std::string actor = "rest";  // the audit log's actor for REST calls
  int stats_cache_ms = 5000;   // /metrics reuses a tenant's record counts this long
  MissionOptions mission;      // the mission routes: degraded mode, escalation, candidates
  TokenOptions tokens;         // the token counter of the mission routes' budgets
  // policy.context_trusted_sources: the trust label of served records.
  std::vector<std::string> trusted_sources = WritePolicyOptions{}.context_trusted_sources;
  // GET /v1/reports/plan: the push orchestrator's weights and clamps
  // (OrchestratorConfigFrom(options): orchestrate.*, mission.*).
  OrchestratorConfig orchestrate;
  // GET /v1/prompts: the prompt repository of the data directory
  // (capture.repository; docs/coding-agents.md); empty: the route answers
  // no prompts. It has no tenant of its own: it is served as kPromptsTenant's.
  std::string prompt_repository;
};

// The tenant the captured prompts are served as: the tenant of local mode
// and of the coding hooks unless `msp setup` was given another.
inline constexpr std::string_view kPromptsTenant = "default";

// Registers every REST route, GET /openapi.json, and the record counts of
// /metrics on `server`. `engine` must outlive `server`. REQUIRES: before
// server.Start().
void MountRestApi(HttpServer& server, MemoryLayer& engine, const RestOptions& options);

// The OpenAPI 3.1 document served at /openapi.json (docs/openapi.json,
// compiled in).
std::string_view OpenApiDocument();

}  // namespace msp

#endif  // MSP_REST_REST_API_H_
