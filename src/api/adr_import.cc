// The declaration of `decision_import_adr`: a folder's Architecture Decision
// Records, handed over as text, imported as mission decisions (msp decision
// import DIR, POST /v1/decisions/import-adr, MCP decision_import_adr), over
// ImportAdrFiles (msp/mission.h). REST and MCP take the files in the
// request; the command line reads DIR (ReadAdrDirectory) and fills `files`
// and, unless --folder is given, `folder` (the directory's absolute path, as
// its imports always named the records). An import may update any decision
// imported from the folder, whatever its access level: a caller who may not
// read every level (a key with a clearance below 9, the command line's
// --operator below 9 in the registry) may not run one, on any face.
#include "api/declare.h"
#include "api/mission_scope.h"
#include "api/operations.h"
#include "api/schema.h"
#include "mission/records.h"
#include "msp/mission.h"

namespace msp::api {
namespace {

using nlohmann::json;

// The most files one import takes.
constexpr size_t kMaxAdrFiles = 1000;

struct AdrImportRequest {
  Namespace scope;
  std::vector<AdrFile> files;
  std::string folder = "adr";
  AdrImportOptions options;
};

Status CheckImport(const AdrImportRequest& r) {
  MSP_RETURN_IF_ERROR(NeedMission(r.scope, "decisions"));
  if (r.files.empty() || r.files.size() > kMaxAdrFiles) {
    return Status::InvalidArgument("field 'files' must hold 1.." + std::to_string(kMaxAdrFiles) +
                                   " files, each {name, text} (one Markdown ADR); got " +
                                   std::to_string(r.files.size()));
  }
  if (r.folder.empty()) return Status::InvalidArgument("field 'folder' must not be empty");
  return Status::Ok();
}

Result<json> HandleImport(const CallContext& context, AdrImportRequest& r) {
  if (context.caller.clearance && *context.caller.clearance < kMaxAccessLevel) {
    return Status::Forbidden("an ADR import may update any decision imported from the folder, whatever its access "
                             "level, but this caller is limited to clearance " +
                             std::to_string(*context.caller.clearance) + ": import as a caller who may read every "
                             "level (no clearance limit, or " + std::to_string(kMaxAccessLevel) + ")");
  }
  // Who decided, when an ADR names no deciders: the namespace's operator by
  // default, as decision_record's decided_by.
  if (r.options.decided_by.empty()) r.options.decided_by = r.scope.operator_id;
  MSP_ASSIGN_OR_RETURN(AdrImportReport report, ImportAdrFiles(*context.engine, r.scope, r.folder, std::move(r.files),
                                                              r.options, context.caller.actor));
  json out = AdrImportReportToJson(report);
  out["dry_run"] = r.options.dry_run;
  return out;
}

// The example's one ADR, in Nygard's form.
constexpr const char* kExampleAdr =
    "# 1. Keep the billing ledger in PostgreSQL\n\nDate: 2026-11-02\n\n## Status\n\nAccepted\n\n## Context\n\n"
    "The ledger needs serializable transactions.\n\n## Decision\n\nWe keep the billing ledger in PostgreSQL.\n\n"
    "## Consequences\n\nOne more database to run.\n";

}  // namespace

std::unique_ptr<Operation> AdrImportOperation() {
  using F = Fields<AdrImportRequest>;
  auto option = [](auto member) {
    return [member](AdrImportRequest& r) -> auto& { return r.options.*member; };
  };
  const json counter = TypedSchema("integer", "Files so counted.");
  Declaration<AdrImportRequest> d;
  d.info = {
      .name = "decision_import_adr",
      .title = "Import architecture decision records",
      .summary =
          "Import a repository's Architecture Decision Records (Markdown in any common form: YAML front matter, "
          "Nygard / adr-tools, MADR, log4brains, Docusaurus; e.g. docs/adr/*.md) as mission decisions, one each, "
          "in one write, keeping every section: send each file's name and text (the command line reads DIR). Ids "
          "come from folder + name, so importing the same folder again leaves unchanged ADRs alone and stores a "
          "changed one as its next revision; supersede links between the files (status lines, sentences, "
          "admonitions, front matter) link both ways. A file that cannot be imported is a 'failed' entry with its "
          "error; the rest is imported. Refused to a caller who may not read every access level.",
      .cli_verb = "decision import",
      .rest_method = "POST",
      .rest_path = "/v1/decisions/import-adr",
      .mcp_tool = "decision_import_adr",
      .idempotent = true,
      .example = {{"namespace", {{"mission", "m1"}}},
                  {"folder", "docs/adr"},
                  {"files", {{{"name", "0001-keep-the-ledger-in-postgresql.md"}, {"text", kExampleAdr}}}},
                  {"component", "billing"},
                  {"dry_run", true}},
      .answer = "{entries: [{file, id, title, action, error}], added, updated, unchanged, failed, warnings, dry_run}",
      .answer_schema = {{"type", "object"},
                        {"properties",
                         {{"entries",
                           {{"type", "array"},
                            {"items", TypedSchema("object", "{file, id, title, action, error}")},
                            {"description", "One a file, in name order; action added, updated, unchanged or "
                                            "failed (then error says why)."}}},
                          {"added", counter},
                          {"updated", counter},
                          {"unchanged", counter},
                          {"failed", TypedSchema("integer", "Files not imported (entries with action failed).")},
                          {"warnings", StringsSchema("FILE: what was tolerated.")},
                          {"dry_run", TypedSchema("boolean", "Nothing was written.")}}},
                        {"required", {"entries", "added", "updated", "unchanged", "failed", "warnings", "dry_run"}}},
  };
  d.fields = {
      MissionScopeField<AdrImportRequest>(),
      F::Files({.name = "files",
                .doc = "The ADR files (1..1000): name (e.g. 0005-use-udp.md, no '/'; or FOLDER/index.md for an "
                       "ADR in a folder of its own), text (Markdown, at most 1 MiB), and optionally first_commit_at "
                       "(ISO 8601: the date of an ADR that names none) and last_author.",
                .required = true,
                .cli = CliForm::kPositional},
               [](AdrImportRequest& r) -> auto& { return r.files; }),
      F::String({.name = "folder",
                 .doc = "Where the files live, e.g. the repository's docs/adr: the decisions' ids and provenance "
                        "derive from it (the command line: DIR's absolute path)."},
                [](AdrImportRequest& r) -> auto& { return r.folder; }),
      F::String({.name = "component", .doc = "The component of every imported decision (an identifier)."},
                option(&AdrImportOptions::component)),
      F::Enum({.name = "criticality", .doc = "Of every imported decision."}, &ParseCriticality, &CriticalityName,
              option(&AdrImportOptions::criticality)),
      F::Int({.name = "access_level", .doc = "Readable by clearance this or above."}, 0, kMaxAccessLevel,
             option(&AdrImportOptions::access_level)),
      F::String({.name = "decided_by", .doc = "Who decided, when an ADR names no deciders (default: the operator)."},
                option(&AdrImportOptions::decided_by)),
      F::Bool({.name = "dry_run", .doc = "Parse and report; write nothing."}, option(&AdrImportOptions::dry_run)),
  };
  d.check = &CheckImport;
  d.handle = &HandleImport;
  return Declare(std::move(d));
}

}  // namespace msp::api
