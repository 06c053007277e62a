// Verbs that read: stats, audit. (search, get and history are src/api's: verbs_api.cc.)
#include <cstdio>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "util/time.h"

namespace msp {

Status RunStats(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(Stats s, engine->GetStats(inv.ns));
  if (inv.json) {
    PrintJson(inv, StatsToJson(s));
    return Status::Ok();
  }
  std::ostream& out = *inv.out;
  out << "records:        " << s.records << " (" << s.active << " active, " << s.expired << " expired)\n";
  for (const auto& [kind, n] : s.by_kind) out << "  " << kind << ": " << n << "\n";
  out << "change seq:     " << s.last_seq << " (lexical index at " << s.lexical_applied_seq << ", vector index at "
      << s.vector_applied_seq << ")\n"
      << "vector index:   " << s.vector_rows << " rows"
      << (s.vector_graph_placed + s.vector_graph_pending > 0
              ? ", graph " + std::to_string(s.vector_graph_placed) + " placed, " +
                    std::to_string(s.vector_graph_pending) + " waiting"
              : std::string())
      << "\n";
  if (s.lexical_rebuilds + s.vector_rebuilds > 0) {
    out << "rebuilt:        lexical index " << s.lexical_rebuilds << "x, vector index " << s.vector_rebuilds
        << "x (found damaged; rebuilt from the store)\n";
  }
  out << "audit events:   " << s.audit_events << "\n"
      << "embedder:       " << s.embedder_id << "\n"
      << "store:          " << s.store_path << "\n";
  return Status::Ok();
}

Status RunAudit(Invocation& inv) {
  Result<int64_t> limit = inv.flags.GetInt("--limit", 100, 1, std::numeric_limits<int>::max());
  if (!limit.ok()) return Usage(inv, limit.status().message());
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(std::vector<AuditEvent> events,
                       engine->Audit(inv.ns, inv.flags.Get("--record"), static_cast<int>(*limit)));
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const AuditEvent& e : events) arr.push_back(AuditEventToJson(e));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  if (events.empty()) *inv.out << "no audit events\n";
  for (const AuditEvent& e : events) {
    *inv.out << e.seq << "  " << FormatIso8601(e.at) << "  " << AuditActionName(e.action) << "  "
             << (e.record_id.empty() ? "-" : e.record_id) << "  " << (e.actor.empty() ? "-" : e.actor) << "  "
             << OneLine(e.reason, 80) << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
