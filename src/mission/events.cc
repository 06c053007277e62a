// Mission events: storing them, reading them back, and the event rate that
// drives degraded mode (see msp/digest.h).
#include <algorithm>
#include <array>
#include <set>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "mission/degraded.h"
#include "mission/records.h"
#include "mission/retrieval_log.h"
#include "msp/digest.h"
#include "util/utf8.h"
#include "working/tokens.h"

namespace msp {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 6> kEventTypes = {"incident", "alert",  "question",
                                                          "threat",   "change", "resolution"};
constexpr size_t kMaxEventTextBytes = 8000;

std::string EventTypeList() {
  std::string out;
  for (std::string_view t : kEventTypes) out += (out.empty() ? "" : ", ") + std::string(t);
  return out;
}

// The mission event `id`, or InvalidArgument naming `field`.
Status RequireEvent(MemoryLayer& engine, const Namespace& mission, const std::string& id, std::string_view field) {
  Result<Memory> m = engine.Get(mission, id);
  if (!m.ok()) {
    if (m.status().IsNotFound()) {
      return Status::InvalidArgument(std::string(field) + ": no event " + id + " in mission " + mission.mission);
    }
    return m.status();
  }
  if (!EventFromMemory(*m).ok()) {
    return Status::InvalidArgument(std::string(field) + ": record " + id + " is not a mission event");
  }
  return Status::Ok();
}

}  // namespace

WorkflowMemory::WorkflowMemory(MemoryLayer& engine, MissionOptions options, std::shared_ptr<Clock> clock,
                               std::shared_ptr<const TokenCounter> counter)
    : engine_(engine),
      options_(std::move(options)),
      clock_(clock ? std::move(clock) : SystemClock()),
      counter_(counter ? std::move(counter) : std::shared_ptr<const TokenCounter>(DefaultTokenCounter())) {}

WorkflowMemory::WorkflowMemory(MemoryLayer& engine, MissionOptions options, std::shared_ptr<Clock> clock)
    : WorkflowMemory(engine, std::move(options), std::move(clock), nullptr) {}

size_t WorkflowMemory::CountTokens(std::string_view text) const { return counter_->Count(text); }

Result<std::unique_ptr<WorkflowMemory>> WorkflowMemory::Open(MemoryLayer& engine, const Options& options,
                                                             std::shared_ptr<Clock> clock) {
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, MakeTokenCounter(options.tokens));
  std::unique_ptr<WorkflowMemory> memory(new WorkflowMemory(engine, options.mission, std::move(clock),
                                                            std::shared_ptr<const TokenCounter>(std::move(counter))));
  memory->trusted_sources_ = options.policy.context_trusted_sources;
  return memory;
}

WorkflowMemory::~WorkflowMemory() = default;

std::unique_ptr<WorkflowMemory> WorkflowMemory::Over(MemoryLayer& engine) const {
  std::unique_ptr<WorkflowMemory> memory(new WorkflowMemory(engine, options_, clock_, counter_));
  memory->trusted_sources_ = trusted_sources_;
  return memory;
}

bool IsEventType(std::string_view type) {
  return std::find(kEventTypes.begin(), kEventTypes.end(), type) != kEventTypes.end();
}

Result<MissionEvent> EventFromMemory(const Memory& m) {
  if (m.kind != Kind::kEvent) return Status::InvalidArgument("record " + m.id + " is not an event");
  MSP_ASSIGN_OR_RETURN(json body, ParseJsonObject(m.body_json, "record " + m.id + " body"));
  auto str = [&](const char* key) {
    auto it = body.find(key);
    return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  MissionEvent e;
  e.type = str("type");
  if (!IsEventType(e.type)) return Status::InvalidArgument("record " + m.id + " is not a mission event");
  e.id = m.id;
  e.component = str("component");
  e.cause_id = str("cause");
  e.resolves_id = str("resolves");
  e.operator_id = str("operator");
  e.criticality = m.criticality;
  e.text = m.text;
  e.access_level = m.access_level;
  e.created_at = m.created_at;
  return e;
}

Result<MissionEvent> WorkflowMemory::AddEvent(const EventRequest& r) {
  MSP_RETURN_IF_ERROR(RequireMission(r.mission));
  if (!IsEventType(r.type)) {
    return Status::InvalidArgument("event type '" + r.type + "' is unknown; use one of: " + EventTypeList());
  }
  if (!IsMissionIdentifier(r.component)) {
    return Status::InvalidArgument("event component '" + r.component +
                                   "' must be an identifier (1..64 characters, no spaces)");
  }
  if (r.text.empty()) return Status::InvalidArgument("event text is empty: say what happened");
  if (r.text.size() > kMaxEventTextBytes) {
    return Status::InvalidArgument("event text has " + std::to_string(r.text.size()) + " bytes; at most " +
                                   std::to_string(kMaxEventTextBytes));
  }
  if (!r.operator_id.empty() && !IsMissionIdentifier(r.operator_id)) {
    return Status::InvalidArgument("event operator '" + r.operator_id + "' must be an identifier");
  }
  MSP_RETURN_IF_ERROR(ValidateAccessLevel(r.access_level));
  const Namespace mission = MissionNamespace(r.mission);
  if (!r.cause_id.empty()) MSP_RETURN_IF_ERROR(RequireEvent(engine_, mission, r.cause_id, "cause"));
  if (!r.resolves_id.empty()) MSP_RETURN_IF_ERROR(RequireEvent(engine_, mission, r.resolves_id, "resolves"));

  json body{{"type", r.type}, {"component", r.component}};
  if (!r.cause_id.empty()) body["cause"] = r.cause_id;
  if (!r.resolves_id.empty()) body["resolves"] = r.resolves_id;
  if (!r.operator_id.empty()) body["operator"] = r.operator_id;
  Memory m;
  m.ns = mission;
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kEvent;
  m.text = r.text;
  m.body_json = body.dump();
  m.tags = r.tags;
  m.source = std::string(kEventSource);
  m.criticality = r.criticality;
  m.access_level = r.access_level;
  if (!r.cause_id.empty()) m.provenance.push_back({"event", r.cause_id, "cause"});
  RecordBatch batch;
  batch.scope = mission;
  batch.puts.push_back(std::move(m));
  batch.actor = r.actor;
  batch.reason = "mission event";
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine_.Commit(batch));
  return EventFromMemory(stored.at(0));
}

Result<std::vector<MissionEvent>> WorkflowMemory::Events(const Namespace& mission, TimeMs from, TimeMs to,
                                                         std::optional<int> clearance) {
  MSP_RETURN_IF_ERROR(RequireMission(mission));
  ListRequest req;
  req.scope = MissionNamespace(mission);
  req.filter.kinds = {Kind::kEvent};
  req.filter.layers = {Layer::kWorkflow};
  req.filter.sources = {std::string(kEventSource)};
  req.filter.created_from = from;
  req.filter.created_to = to;
  req.filter.max_access_level = clearance;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, ListAll(engine_, req));
  std::vector<MissionEvent> out;
  for (const Memory& m : records) {
    Result<MissionEvent> e = EventFromMemory(m);
    if (e.ok()) out.push_back(std::move(e).value());
  }
  std::stable_sort(out.begin(), out.end(), [](const MissionEvent& a, const MissionEvent& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return out;
}

Result<LoadState> WorkflowMemory::Load(const Namespace& mission, std::optional<int> clearance) {
  const TimeMs now = clock_->NowMs();
  const TimeMs window = static_cast<TimeMs>(std::max(options_.rate_window_min, 0)) * 60000;
  MSP_ASSIGN_OR_RETURN(std::vector<MissionEvent> events, Events(mission, now - window + 1, now + 1, clearance));
  // A resolved question or threat stops counting. Its resolution comes
  // after it, so within the window too (resolutions above the clearance
  // included: they close an item without revealing how).
  std::vector<MissionEvent> all;
  if (clearance) {
    MSP_ASSIGN_OR_RETURN(all, Events(mission, now - window + 1, now + 1, std::nullopt));
  }
  const std::vector<MissionEvent>& every = clearance ? all : events;  // without a clearance, the same list
  std::set<std::string> resolved;
  for (const MissionEvent& e : every) {
    if (!e.resolves_id.empty()) resolved.insert(e.resolves_id);
  }
  std::vector<TimeMs> times;
  times.reserve(events.size());
  for (const MissionEvent& e : events) {
    if (resolved.count(e.id) == 0) times.push_back(e.created_at);
  }
  return LoadFrom(times, now, options_);
}

}  // namespace msp
