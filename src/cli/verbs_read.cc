// Verbs that read: stats, audit. (search, get and history are src/api's: verbs_api.cc.)
#include <cstdio>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "util/time.h"

namespace msp {

// stats: src/api's memory_stats (api/stats.cc), printed with the data
// directory it counted.
Status RunStats(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& s = *answer;
  auto n = [&s](const char* name) { return s.value(name, int64_t{0}); };
  std::ostream& out = *inv.out;
  out << "records:        " << n("records") << " (" << n("active") << " active, " << n("expired") << " expired)\n";
  for (const auto& [kind, count] : s["by_kind"].items()) out << "  " << kind << ": " << count.get<int64_t>() << "\n";
  out << "change seq:     " << n("last_seq") << " (lexical index at " << n("lexical_applied_seq")
      << ", vector index at " << n("vector_applied_seq") << ")\n"
      << "vector index:   " << n("vector_rows") << " rows"
      << (n("vector_graph_placed") + n("vector_graph_pending") > 0
              ? ", graph " + std::to_string(n("vector_graph_placed")) + " placed, " +
                    std::to_string(n("vector_graph_pending")) + " waiting"
              : std::string())
      << "\n";
  const nlohmann::json& rebuilds = s["index_rebuilds"];
  if (rebuilds.value("lexical", int64_t{0}) + rebuilds.value("vector", int64_t{0}) > 0) {
    out << "rebuilt:        lexical index " << rebuilds.value("lexical", int64_t{0}) << "x, vector index "
        << rebuilds.value("vector", int64_t{0}) << "x (found damaged; rebuilt from the store)\n";
  }
  if (s.contains("audit_events")) out << "audit events:   " << n("audit_events") << "\n";
  out << "embedder:       " << s.value("embedder_id", std::string()) << "\n"
      << "data directory: " << inv.config.options.store.data_dir << "\n";
  return Status::Ok();
}

// audit: src/api's memory_audit (api/audit.cc), a line an event.
Status RunAudit(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::optional<nlohmann::json> answer, AnswerToPrint(inv, /*create=*/false));
  if (!answer) return Status::Ok();
  const nlohmann::json& events = (*answer)["events"];
  if (events.empty()) *inv.out << "no audit events\n";
  for (const nlohmann::json& e : events) {
    const std::string record = e["record_id"].get<std::string>();
    const std::string actor = e["actor"].get<std::string>();
    *inv.out << e["seq"].get<int64_t>() << "  " << e["at"].get<std::string>() << "  "
             << e["action"].get<std::string>() << "  " << (record.empty() ? "-" : record) << "  "
             << (actor.empty() ? "-" : actor) << "  " << OneLine(e["reason"].get<std::string>(), 80) << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
