// Verbs that create or change records: init, fact add, fact supersede (write and delete are
// src/api's memory_write and memory_delete: verbs_api.cc).
#include <filesystem>
#include <ostream>

#include "cli/cli.h"
#include "codec/memory_json.h"

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

}  // namespace msp
