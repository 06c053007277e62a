// Idempotency keys of writes (see idempotency.h).
#include "core/idempotency.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/hash.h"

namespace msp {

using json = nlohmann::json;

namespace {

std::string HexHash(const json& canonical) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a64(canonical.dump())));
  return hex;
}

}  // namespace

Status ValidateRequestId(const std::string& request_id) {
  if (request_id.empty() || request_id.size() > 200) {
    return Status::InvalidArgument("request_id must be 1..200 characters, got " +
                                   std::to_string(request_id.size()));
  }
  for (char c : request_id) {
    if (c < 0x21 || c > 0x7E) {
      return Status::InvalidArgument(
          "request_id may hold only printable ASCII characters without spaces (a UUID, say)");
    }
  }
  return Status::Ok();
}

std::string WriteRequestHash(const WriteRequest& r) {
  json provenance = json::array();
  for (const ProvenanceRef& p : r.provenance) provenance.push_back({p.type, p.ref, p.detail});
  const json canonical = {r.ns.tenant,
                          r.ns.user,
                          r.ns.agent,
                          r.ns.session,
                          r.ns.mission,
                          r.ns.operator_id,
                          std::string(KindName(r.kind)),
                          r.layer ? std::string(LayerName(*r.layer)) : std::string(),
                          r.text,
                          r.body_json,
                          r.tags,
                          r.source,
                          std::string(SensitivityName(r.sensitivity)),
                          std::string(CriticalityName(r.criticality)),
                          r.confidence,
                          r.ttl_days,
                          r.valid_at,
                          provenance};
  return HexHash(canonical);
}

std::string EpisodeStepHash(const EpisodeStep& s) {
  const json canonical = {s.ns.tenant,
                          s.ns.user,
                          s.ns.agent,
                          s.ns.session,
                          s.ns.mission,
                          s.ns.operator_id,
                          s.step_number,
                          std::string(EpisodeTypeName(s.type)),
                          s.content_json,
                          s.text,
                          s.tool_name,
                          s.duration_ms,
                          s.token_count,
                          s.timestamp,
                          s.tags,
                          std::string(SensitivityName(s.sensitivity)),
                          s.source};
  return HexHash(canonical);
}

std::string WriteReplyJson(const WriteResult& result) {
  return json{{"id", result.id}, {"merged", result.merged}, {"evicted_ids", result.evicted_ids}}.dump();
}

Result<WriteResult> WriteReplyFromJson(const std::string& reply) {
  const json j = json::parse(reply, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("id") || !j["id"].is_string()) {
    return Status::Corruption("a stored idempotency reply is not a write result: " + reply);
  }
  WriteResult out;
  out.id = j["id"].get<std::string>();
  out.merged = j.value("merged", false);
  if (j.contains("evicted_ids") && j["evicted_ids"].is_array()) {
    for (const json& id : j["evicted_ids"]) {
      if (id.is_string()) out.evicted_ids.push_back(id.get<std::string>());
    }
  }
  return out;
}

Result<WriteResult> AnswerRepeat(const IdempotencyKey& held, const std::string& hash) {
  if (held.request_hash != hash) {
    return Status::Conflict("request_id '" + held.key +
                            "' was used for a different write (in this tenant, within store.idempotency_ttl_hours); "
                            "nothing was written: use a new request_id for a new write");
  }
  return WriteReplyFromJson(held.reply);
}

}  // namespace msp
