// The records this part writes besides events' typed form: the retrieval log
// (one Kind::kEvent record per workflow_memory_query call), and the helpers
// the query, the reports and the handoff share.
//
// Internal header (nlohmann::json allowed).
//
// Retrieval-log record: Kind::kEvent, Layer::kWorkflow, ns {tenant, mission,
// session}, text "" (so it never matches a search), source "retrieval-log",
// access_level = the highest level among the entries it served (the log
// reveals no more than they do), body:
//   {type:"retrieval", query, scope, operator, clearance,
//    filters:{component, criticalities:[..], from, to},
//    served:[{id, layer, score, tokens}], left_out, tokens_used,
//    token_budget, counter, degraded, alpha, rate_per_min, used:[id]}
// `used` grows through WorkflowMemory::MarkUsed (compare-and-swap).
#ifndef MSP_MISSION_RETRIEVAL_LOG_H_
#define MSP_MISSION_RETRIEVAL_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/digest.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

inline constexpr std::string_view kRetrievalType = "retrieval";
inline constexpr std::string_view kRetrievalLogSource = "retrieval-log";
inline constexpr std::string_view kEventSource = "mission-event";

struct ServedRef {
  std::string id;
  Layer layer = Layer::kWorkflow;
  double score = 0.0;
  int64_t tokens = 0;
};

struct RetrievalLog {
  // From the record:
  std::string id;
  Namespace ns;
  TimeMs created_at = 0;
  int64_t seq = 0;
  // From the body:
  std::string query;
  std::string scope;
  std::string operator_id;
  int clearance = 0;
  std::string component;  // the query's component filter
  std::vector<ServedRef> served;
  int64_t left_out = 0;
  int64_t tokens_used = 0;
  int64_t token_budget = 0;
  std::string counter;
  bool degraded = false;
  double alpha = 0.0;
  double rate_per_min = 0.0;
  std::vector<std::string> used;
};

// True for a retrieval-log record.
bool IsRetrievalLog(const Memory& m);
// The body of a retrieval-log record (the JSON described above).
nlohmann::json RetrievalLogBody(const RetrievalLog& log, const QueryFilters& filters);
// InvalidArgument when `m` is not a retrieval log or its body is malformed.
Result<RetrievalLog> RetrievalLogFromMemory(const Memory& m);

// Every record List returns for `request`, whatever its limit (limit 0).
Result<std::vector<Memory>> ListAll(MemoryLayer& engine, ListRequest request);
// The retrieval logs of the mission created in [from, to), oldest first.
Result<std::vector<RetrievalLog>> ListRetrievalLogs(MemoryLayer& engine, const Namespace& mission, TimeMs from,
                                                    TimeMs to);

// A record's component: its body's "component" string, else the value of a
// "component:X" tag, else "".
std::string ComponentOf(const Memory& m);
// The body's "type" string, or "" (malformed bodies included).
std::string BodyType(const Memory& m);
// The ISO 8601 week of `t` (UTC): "2026-W01".
std::string IsoWeek(TimeMs t);

}  // namespace msp

#endif  // MSP_MISSION_RETRIEVAL_LOG_H_
