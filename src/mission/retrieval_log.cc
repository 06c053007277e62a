// The retrieval log and shared helpers (see retrieval_log.h).
#include "mission/retrieval_log.h"

#include <chrono>
#include <cstdio>

#include "codec/memory_json.h"
#include "util/time.h"

namespace msp {
namespace {

using nlohmann::json;

json TimeOrNull(TimeMs t) { return t == 0 ? json(nullptr) : json(FormatIso8601(t)); }

// body[key] as T when present and of that type; `fallback` otherwise.
template <typename T>
T Field(const json& body, const char* key, T fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

}  // namespace

bool IsRetrievalLog(const Memory& m) { return m.kind == Kind::kEvent && BodyType(m) == kRetrievalType; }

std::string BodyType(const Memory& m) {
  Result<json> body = ParseJsonObject(m.body_json, "body");
  if (!body.ok()) return "";
  return Field<std::string>(*body, "type", "");
}

json RetrievalLogBody(const RetrievalLog& log, const QueryFilters& filters) {
  json served = json::array();
  for (const ServedRef& s : log.served) {
    served.push_back({{"id", s.id}, {"layer", LayerName(s.layer)}, {"score", s.score}, {"tokens", s.tokens}});
  }
  json crits = json::array();
  for (Criticality c : filters.criticalities) crits.push_back(CriticalityName(c));
  return json{{"type", kRetrievalType},
              {"query", log.query},
              {"scope", log.scope},
              {"operator", log.operator_id},
              {"clearance", log.clearance},
              {"filters",
               {{"component", filters.component},
                {"criticalities", crits},
                {"from", TimeOrNull(filters.from)},
                {"to", TimeOrNull(filters.to)}}},
              {"served", served},
              {"left_out", log.left_out},
              {"tokens_used", log.tokens_used},
              {"token_budget", log.token_budget},
              {"counter", log.counter},
              {"degraded", log.degraded},
              {"alpha", log.alpha},
              {"rate_per_min", log.rate_per_min},
              {"used", log.used}};
}

Result<RetrievalLog> RetrievalLogFromMemory(const Memory& m) {
  if (m.kind != Kind::kEvent) return Status::InvalidArgument("record " + m.id + " is not an event");
  MSP_ASSIGN_OR_RETURN(json body, ParseJsonObject(m.body_json, "record " + m.id + " body"));
  if (Field<std::string>(body, "type", "") != kRetrievalType) {
    return Status::InvalidArgument("record " + m.id + " is not a retrieval log");
  }
  RetrievalLog log;
  log.id = m.id;
  log.ns = m.ns;
  log.created_at = m.created_at;
  log.seq = m.seq;
  log.query = Field<std::string>(body, "query", "");
  log.scope = Field<std::string>(body, "scope", "all");
  log.operator_id = Field<std::string>(body, "operator", "");
  log.clearance = Field<int>(body, "clearance", 0);
  if (auto f = body.find("filters"); f != body.end() && f->is_object()) {
    log.component = Field<std::string>(*f, "component", "");
  }
  if (auto s = body.find("served"); s != body.end() && s->is_array()) {
    for (const json& e : *s) {
      if (!e.is_object()) return Status::InvalidArgument("retrieval log " + m.id + ": served entry is not an object");
      ServedRef r;
      r.id = Field<std::string>(e, "id", "");
      if (r.id.empty()) return Status::InvalidArgument("retrieval log " + m.id + ": served entry without id");
      r.layer = ParseLayer(Field<std::string>(e, "layer", "workflow")).value_or(Layer::kWorkflow);
      r.score = Field<double>(e, "score", 0.0);
      r.tokens = Field<int64_t>(e, "tokens", 0);
      log.served.push_back(std::move(r));
    }
  }
  log.left_out = Field<int64_t>(body, "left_out", 0);
  log.tokens_used = Field<int64_t>(body, "tokens_used", 0);
  log.token_budget = Field<int64_t>(body, "token_budget", 0);
  log.counter = Field<std::string>(body, "counter", "");
  log.degraded = Field<bool>(body, "degraded", false);
  log.alpha = Field<double>(body, "alpha", 0.0);
  log.rate_per_min = Field<double>(body, "rate_per_min", 0.0);
  log.used = Field<std::vector<std::string>>(body, "used", {});
  return log;
}

Result<std::vector<Memory>> ListAll(MemoryLayer& engine, ListRequest request) {
  request.limit = 0;
  request.offset = 0;
  return engine.List(request);
}

Result<std::vector<RetrievalLog>> ListRetrievalLogs(MemoryLayer& engine, const Namespace& mission, TimeMs from,
                                                    TimeMs to) {
  ListRequest req;
  req.scope.tenant = mission.tenant;
  req.scope.mission = mission.mission;
  req.filter.kinds = {Kind::kEvent};
  req.filter.layers = {Layer::kWorkflow};
  req.filter.sources = {std::string(kRetrievalLogSource)};
  req.filter.created_from = from;
  req.filter.created_to = to;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, ListAll(engine, req));
  std::vector<RetrievalLog> out;
  for (const Memory& m : records) {
    if (!IsRetrievalLog(m)) continue;
    MSP_ASSIGN_OR_RETURN(RetrievalLog log, RetrievalLogFromMemory(m));
    out.push_back(std::move(log));
  }
  std::stable_sort(out.begin(), out.end(), [](const RetrievalLog& a, const RetrievalLog& b) {
    return a.created_at < b.created_at;
  });
  return out;
}

std::string ComponentOf(const Memory& m) {
  Result<json> body = ParseJsonObject(m.body_json, "body");
  if (body.ok()) {
    std::string c = Field<std::string>(*body, "component", "");
    if (!c.empty()) return c;
  }
  constexpr std::string_view kPrefix = "component:";
  for (const std::string& t : m.tags) {
    if (t.size() > kPrefix.size() && t.compare(0, kPrefix.size(), kPrefix) == 0) return t.substr(kPrefix.size());
  }
  return "";
}

std::string IsoWeek(TimeMs t) {
  using namespace std::chrono;
  const sys_days day = floor<days>(sys_time<milliseconds>(milliseconds(t)));
  const weekday wd{day};
  const int iso_wd = static_cast<int>(wd.iso_encoding());  // Monday 1 .. Sunday 7
  const sys_days thursday = day + days(4 - iso_wd);
  const year_month_day ymd{thursday};
  const sys_days jan1 = sys_days(ymd.year() / January / 1);
  const int week = static_cast<int>((thursday - jan1).count() / 7) + 1;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-W%02d", static_cast<int>(ymd.year()), week);
  return buf;
}

}  // namespace msp
