// Verbs that create or change records: init, write, fact add, fact supersede, delete.
#include <filesystem>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"
#include "core/idempotency.h"

namespace msp {
namespace {

// The flags every record-writing verb shares.
struct RecordFields {
  std::vector<std::string> tags;
  std::string source = "user";
  Sensitivity sensitivity = Sensitivity::kLow;
  Criticality criticality = Criticality::kNormal;
  double confidence = 1.0;
  TimeMs valid_at = 0;
  std::vector<ProvenanceRef> provenance;
};

Result<RecordFields> ReadRecordFlags(Invocation& inv) {
  RecordFields f;
  const ParsedFlags& flags = inv.flags;
  f.tags = flags.All("--tag");
  f.source = flags.Get("--source", f.source);
  if (flags.Has("--sensitivity")) {
    MSP_ASSIGN_OR_RETURN(f.sensitivity, EnumFlag(inv, "--sensitivity", flags.Get("--sensitivity"),
                                                 &ParseSensitivity, &SensitivityName));
  }
  if (flags.Has("--criticality")) {
    MSP_ASSIGN_OR_RETURN(f.criticality, EnumFlag(inv, "--criticality", flags.Get("--criticality"),
                                                 &ParseCriticality, &CriticalityName));
  }
  Result<double> confidence = flags.GetDouble("--confidence", 1.0, 0.0, 1.0);
  if (!confidence.ok()) return Usage(inv, confidence.status().message());
  f.confidence = *confidence;
  MSP_ASSIGN_OR_RETURN(f.valid_at, TimeFlag(inv, "--valid-at"));
  MSP_ASSIGN_OR_RETURN(f.provenance, ProvenanceFlags(inv));
  return f;
}

Result<FactRequest> ReadFactRequest(Invocation& inv, size_t text_index) {
  MSP_ASSIGN_OR_RETURN(RecordFields f, ReadRecordFlags(inv));
  FactRequest r;
  r.ns = inv.ns;
  MSP_ASSIGN_OR_RETURN(r.text, TextArgument(inv, text_index, true));
  r.confidence = f.confidence;
  r.source_episodes = inv.flags.All("--source-episode");
  r.tags = std::move(f.tags);
  r.source = std::move(f.source);
  r.sensitivity = f.sensitivity;
  r.criticality = f.criticality;
  r.valid_at = f.valid_at;
  r.provenance = std::move(f.provenance);
  r.actor = inv.actor;
  return r;
}

void PrintEvicted(Invocation& inv, const WriteResult& r) {
  for (const std::string& id : r.evicted_ids) *inv.out << "evicted " << id << " (per-user limit)\n";
}

}  // namespace

Status RunInit(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(Stats stats, engine->GetStats(Namespace{}));
  std::error_code ec;
  const std::string dir = std::filesystem::absolute(inv.config.options.store.data_dir, ec).lexically_normal().string();
  if (inv.json) {
    PrintJson(inv, nlohmann::json{{"data_dir", dir},
                                  {"store_path", stats.store_path},
                                  {"config_file", inv.config.config_file},
                                  {"records", stats.records}});
    return Status::Ok();
  }
  *inv.out << "msp store ready in " << dir << "\n";
  if (!stats.store_path.empty()) *inv.out << "store:   " << stats.store_path << "\n";
  *inv.out << "config:  " << (inv.config.config_file.empty() ? "(defaults, environment and flags)" : inv.config.config_file)
           << "\n";
  return Status::Ok();
}

Status RunWrite(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(RecordFields f, ReadRecordFlags(inv));
  WriteRequest r;
  r.ns = inv.ns;
  MSP_ASSIGN_OR_RETURN(r.text, TextArgument(inv, 0, true));
  if (inv.flags.Has("--kind")) {
    MSP_ASSIGN_OR_RETURN(r.kind, EnumFlag(inv, "--kind", inv.flags.Get("--kind"), &ParseKind, &KindName));
  }
  if (inv.flags.Has("--layer")) {
    MSP_ASSIGN_OR_RETURN(r.layer, EnumFlag(inv, "--layer", inv.flags.Get("--layer"), &ParseLayer, &LayerName));
  }
  if (inv.flags.Has("--body")) {
    MSP_ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonObject(inv.flags.Get("--body"), "--body"));
    r.body_json = body.dump();
  }
  Result<int64_t> ttl = inv.flags.GetInt("--ttl-days", 0, -1000000, 1000000);
  if (!ttl.ok()) return Usage(inv, ttl.status().message());
  // 0 would mean "the configured default" (no expiry unless
  // policy.default_ttl_days is set): not the "expire after 0 days" it reads as.
  if (inv.flags.Has("--ttl-days") && *ttl == 0) {
    return Usage(inv, "--ttl-days 0 is not a time to live: give " +
                          std::to_string(inv.config.options.policy.ttl_min_days) + ".." +
                          std::to_string(inv.config.options.policy.ttl_max_days) +
                          " days (policy.ttl_min_days..ttl_max_days); to store without expiry leave --ttl-days out "
                          "(the record then takes policy.default_ttl_days, " +
                          std::to_string(inv.config.options.policy.default_ttl_days) + ", and 0 there means never)");
  }
  if (inv.flags.Has("--ttl-days") && (*ttl < 1 || *ttl > 36500)) {
    return Usage(inv, "--ttl-days must be between 1 and 36500 (the same on REST and MCP), got " +
                          std::to_string(*ttl));
  }
  r.ttl_days = static_cast<int>(*ttl);
  r.tags = std::move(f.tags);
  r.source = std::move(f.source);
  r.sensitivity = f.sensitivity;
  r.criticality = f.criticality;
  r.confidence = f.confidence;
  r.valid_at = f.valid_at;
  r.provenance = std::move(f.provenance);
  r.actor = inv.actor;
  if (inv.flags.Has("--request-id")) {
    r.request_id = inv.flags.Get("--request-id");
    if (Status s = ValidateRequestId(r.request_id); !s.ok()) return Usage(inv, "--request-id: " + s.message());
  }

  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(WriteResult result, engine->Write(r));
  if (inv.json) {
    PrintJson(inv, WriteResultToJson(result));
    return Status::Ok();
  }
  *inv.out << (result.merged ? "merged into " : "stored ") << result.id << "\n";
  PrintEvicted(inv, result);
  return Status::Ok();
}

Status RunFactAdd(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(FactRequest r, ReadFactRequest(inv, 0));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(WriteResult result, engine->AddFact(r));
  if (inv.json) {
    PrintJson(inv, WriteResultToJson(result));
    return Status::Ok();
  }
  *inv.out << (result.merged ? "merged into fact " : "added fact ") << result.id << "\n";
  PrintEvicted(inv, result);
  return Status::Ok();
}

Status RunFactSupersede(Invocation& inv) {
  const std::string old_id = inv.flags.positionals[0];
  MSP_ASSIGN_OR_RETURN(FactRequest r, ReadFactRequest(inv, 1));
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_ASSIGN_OR_RETURN(WriteResult result, engine->SupersedeFact(inv.ns, old_id, r));
  if (inv.json) {
    nlohmann::json j = WriteResultToJson(result);
    j["superseded"] = old_id;
    PrintJson(inv, j);
    return Status::Ok();
  }
  *inv.out << "superseded " << old_id << " by " << result.id << "\n";
  PrintEvicted(inv, result);
  return Status::Ok();
}

Status RunDelete(Invocation& inv) {
  const std::string id = inv.flags.positionals[0];
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_RETURN_IF_ERROR(engine->Delete(inv.ns, id, inv.flags.Get("--reason"), inv.actor));
  if (inv.json) {
    PrintJson(inv, nlohmann::json{{"deleted", id}});
  } else {
    *inv.out << "deleted " << id << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
