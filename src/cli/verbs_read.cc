// Verbs that read: search, get, history, stats, audit.
#include <chrono>
#include <cstdio>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "util/time.h"

namespace msp {

Status RunSearch(Invocation& inv) {
  const ParsedFlags& flags = inv.flags;
  RetrieveRequest r;
  r.scope = inv.ns;
  r.query = inv.flags.positionals[0];
  Result<int64_t> top_k = flags.GetInt("--top-k", 10, 1, 1000);
  if (!top_k.ok()) return Usage(inv, top_k.status().message());
  r.top_k = static_cast<int>(*top_k);
  Result<double> min_score = flags.GetDouble("--min-score", 0.0, 0.0, 1.0);
  if (!min_score.ok()) return Usage(inv, min_score.status().message());
  r.min_score = *min_score;
  MSP_ASSIGN_OR_RETURN(r.filter.kinds, EnumFlags(inv, "--kind", &ParseKind, &KindName));
  MSP_ASSIGN_OR_RETURN(r.filter.layers, EnumFlags(inv, "--layer", &ParseLayer, &LayerName));
  r.filter.tags = flags.All("--tag");
  r.filter.sources = flags.All("--source");
  MSP_ASSIGN_OR_RETURN(r.filter.created_from, TimeFlag(inv, "--since"));
  MSP_ASSIGN_OR_RETURN(r.filter.created_to, TimeFlag(inv, "--until"));
  if (r.filter.created_from != 0 && r.filter.created_to != 0 && r.filter.created_to <= r.filter.created_from) {
    return Usage(inv, "--until must be later than --since");
  }
  r.filter.include_superseded = flags.Has("--include-superseded");
  MSP_ASSIGN_OR_RETURN(r.as_of, TimeFlag(inv, "--as-of"));
  r.explain = flags.Has("--explain");

  // --timing: where a search process's time goes, on stderr.
  const bool timing = flags.Has("--timing");
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  auto ms = [](Clock::time_point from, Clock::time_point to) {
    return Fixed(std::chrono::duration<double, std::milli>(to - from).count(), 2);
  };
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  const Clock::time_point opened = Clock::now();
  if (timing) MSP_RETURN_IF_ERROR(engine->CatchUpIndexes());
  const Clock::time_point caught_up = Clock::now();
  MSP_ASSIGN_OR_RETURN(std::vector<SearchHit> hits, engine->Retrieve(r));
  const Clock::time_point queried = Clock::now();
  const auto report_timing = [&] {
    if (!timing) return;
    *inv.err << "timing: open " << ms(started, opened) << " ms, catch-up " << ms(opened, caught_up)
             << " ms, query " << ms(caught_up, queried) << " ms, render " << ms(queried, Clock::now())
             << " ms\n";
  };
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SearchHit& h : hits) arr.push_back(SearchHitToJson(h));
    PrintJson(inv, arr);
    report_timing();
    return Status::Ok();
  }
  if (hits.empty()) *inv.out << "no results\n";
  for (const SearchHit& h : hits) {
    *inv.out << Fixed(h.score, 3) << "  " << KindName(h.memory.kind) << "  " << h.memory.id << "  "
             << OneLine(h.memory.text) << "\n";
    for (const SignalContribution& c : h.explain) {
      *inv.out << "       " << c.signal << ": "
               << (c.rank == 0 ? std::string("not found") : "rank " + std::to_string(c.rank) + ", raw " + Fixed(c.raw, 4))
               << ", adds " << Fixed(c.contribution, 4) << "\n";
    }
  }
  report_timing();
  return Status::Ok();
}

Status RunGet(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(Memory m, engine->Get(inv.ns, inv.flags.positionals[0]));
  if (inv.json) {
    PrintJson(inv, MemoryToJson(m));
  } else {
    PrintMemoryDetail(*inv.out, m);
  }
  return Status::Ok();
}

Status RunHistory(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> versions, engine->History(inv.ns, inv.flags.positionals[0]));
  if (inv.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Memory& m : versions) arr.push_back(MemoryToJson(m));
    PrintJson(inv, arr);
    return Status::Ok();
  }
  for (const Memory& m : versions) {
    *inv.out << FormatIso8601(m.created_at) << "  " << RecordStateName(m.state) << "  " << m.id << "  "
             << OneLine(m.text) << "\n";
  }
  return Status::Ok();
}

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
      << "\n"
      << "audit events:   " << s.audit_events << "\n"
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
