// Mission records (seed 003): decisions with provenance, the principles
// registry, operators and their clearance, and per-operator corrections.
//
// Everything here is stored as ordinary msp `Memory` records through
// MemoryLayer (Commit for the writes, Get / List / Retrieve for the reads);
// the record formats (the JSON bodies) are in docs/mission.md and
// src/mission/records.h.
//
// Scope: every call takes a Namespace `scope`; its tenant and mission name
// the mission (mission is required). Other parts of the scope are ignored,
// except operator_id for corrections (the operator they belong to).
//   decisions   Kind::kDecision,   Layer::kWorkflow,     ns {tenant, mission}
//   principles  Kind::kPrinciple,  Layer::kWorkflow,     ns {tenant, mission}
//   operators   Kind::kEntity,     Layer::kSemantic,     ns {tenant, mission}
//                                  (body type "operator", tag "msp:operator")
//   corrections Kind::kCorrection, Layer::kPractitioner, ns {tenant, mission, operator_id}
//
// Access: every mission record carries Memory::access_level (0..9). A read
// takes an Asker and serves only records whose level is at or below the
// asker's clearance; a record above it reads as NotFound (its existence is
// not revealed). An operator not in the registry has clearance 0. The faces
// call these functions over AsCaller's layer (msp/caller.h), which enforces
// the caller's clearance beneath the asker's; CallerAsker is the asker.
//
// Errors: InvalidArgument names the field and the rule; Refused is a
// correction that looks like raw prompt or output text; Conflict is a lost
// compare-and-swap (a concurrent edit) and names the current version;
// NotFound is a missing (or invisible) record.
//
// Thread-safety: these are free functions over a MemoryLayer, which is
// thread-safe; writes use compare-and-swap so that concurrent writers in
// several processes never overwrite each other silently.
#ifndef MSP_MISSION_H_
#define MSP_MISSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msp/caller.h"
#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// Access levels and clearances run from 0 to kMaxAccessLevel (types.h).

// Who is reading. When `clearance` is set it is used as is (trusted callers:
// tools run by an administrator, tests); otherwise the clearance is
// ClearanceOf(scope, operator_id) (0 for an empty or unknown operator).
struct Asker {
  std::string operator_id;
  std::optional<int> clearance;
};

// ---------------------------------------------------------------- decisions

// proposed -> accepted | rejected; accepted -> deprecated; any but
// superseded -> superseded (only through SupersedeDecision). superseded is
// final.
enum class DecisionStatus { kProposed, kAccepted, kRejected, kDeprecated, kSuperseded };
// "proposed", "accepted", "rejected", "deprecated", "superseded".
std::string_view DecisionStatusName(DecisionStatus s);
std::optional<DecisionStatus> ParseDecisionStatus(std::string_view s);

// A rejected alternative and why it was rejected.
struct Alternative {
  std::string option;
  std::string reason;
  bool operator==(const Alternative&) const = default;
};

// A part of a decision beyond the fixed fields: an ADR section the importer
// does not map ("Decision Drivers", "Pros and Cons of the Options", "Entity
// References in URLs"), kept with its heading. Searchable: the record's text
// holds it.
struct DecisionSection {
  std::string heading;  // as written, without '#'; may be empty
  std::string text;
  bool operator==(const DecisionSection&) const = default;
};

// One imported version of an ADR file (ADR import keeps these, oldest
// first): a re-import that finds the file changed adds one.
struct DecisionRevision {
  int revision = 1;
  TimeMs at = 0;       // when that import stored it
  std::string by;      // who imported it (the actor)
  std::string author;  // the author of the file's latest commit, when known
  bool operator==(const DecisionRevision&) const = default;
};

struct Decision {
  // Assigned on add (a UUID); ADR imports get a deterministic id.
  std::string id;
  std::string title;          // required; one line, <= 200 characters
  std::string context;        // required; <= 12,000 bytes
  std::string decision;       // required; <= 8,000 bytes
  std::vector<Alternative> alternatives;  // rejected ones; <= 32
  std::string consequences;   // <= 12,000 bytes
  std::vector<std::string> principles;    // cited principle ids ("P-7"); must exist
  std::string component;      // an identifier (see IsMissionIdentifier); optional
  Criticality criticality = Criticality::kNormal;
  DecisionStatus status = DecisionStatus::kAccepted;
  std::string decided_by;     // who decided (operator id or names); one line
  TimeMs decided_at = 0;      // 0 on add: the record's created_at
  std::vector<ProvenanceRef> provenance;  // commit, issue, url, document (+ page)
  int access_level = 0;       // 0..9
  std::vector<std::string> tags;
  int adr_number = 0;         // ADR imports: the ADR's number (0: none)
  std::vector<DecisionSection> sections;   // further parts; ADR imports only
  std::vector<DecisionRevision> revisions; // ADR imports only, oldest first
  // Set by SupersedeDecision / ADR import, read-only on add:
  std::string supersedes;     // the decision this one replaced
  std::string superseded_by;  // the decision that replaced this one
  // Read-only, from the stored record:
  Namespace ns;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  int64_t seq = 0;
  std::string source;         // the record's source (operator, adr, ...)

  bool operator==(const Decision&) const = default;
};

struct DecisionFilter {
  std::vector<std::string> components;       // any of them; empty: all
  std::vector<DecisionStatus> statuses;      // any of them; empty: all
  std::vector<Criticality> criticalities;    // any of them; empty: all
  TimeMs from = 0;   // decided_at >= from (0: unbounded)
  TimeMs to = 0;     // decided_at < to (0: unbounded)
  // Non-empty: ranked by relevance to this text (MemoryLayer::Retrieve,
  // superseded decisions included only when `statuses` names superseded);
  // empty: ordered by decided_at.
  std::string query;
  bool newest_first = false;
  int limit = 0;     // 0: all
};

// Validates `d` and stores it as a new decision (status must not be
// superseded; id, supersedes, superseded_by must be empty). Cited principles
// must exist in the mission's registry (InvalidArgument otherwise).
// Returns the stored decision (id, timestamps, seq).
Result<Decision> AddDecision(MemoryLayer& engine, const Namespace& scope, const Decision& d,
                             const std::string& actor);
Result<Decision> GetDecision(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                             const Asker& asker);
Result<std::vector<Decision>> ListDecisions(MemoryLayer& engine, const Namespace& scope,
                                            const DecisionFilter& filter, const Asker& asker);
// Moves a decision to `status` (not superseded: use SupersedeDecision).
// FailedPrecondition from a superseded decision; Conflict when the record
// changed concurrently.
Result<Decision> SetDecisionStatus(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                                   DecisionStatus status, const std::string& actor);

struct SupersedeResult {
  Decision old_decision;  // now superseded, superseded_by = new
  Decision new_decision;  // supersedes = old (when it named no other yet)
};
// Marks decision `old_id` superseded by the existing decision `new_id`, both
// links in one atomic write. The old record keeps its content and history.
// Errors: the same id twice, either missing, old already superseded
// (FailedPrecondition naming its successor), new superseded, a cycle.
Result<SupersedeResult> SupersedeDecision(MemoryLayer& engine, const Namespace& scope,
                                          const std::string& old_id, const std::string& new_id,
                                          const std::string& actor);

// --------------------------------------------------------------- ADR import

struct AdrImportOptions {
  std::string component;                      // for every imported decision
  Criticality criticality = Criticality::kNormal;
  int access_level = 0;
  std::string decided_by;                     // when the ADR names no deciders
  bool dry_run = false;                       // parse and report, write nothing
  TimeMs now = 0;                             // the revisions' time; 0: the system clock
};

struct AdrImportEntry {
  std::string file;    // absolute path (also the provenance ref)
  std::string id;      // the decision's (deterministic) id
  std::string title;
  std::string action;  // "added", "updated", "unchanged", "failed"
  std::string error;   // for "failed": why the file was not imported
};

struct AdrImportReport {
  std::vector<AdrImportEntry> entries;  // in file-name order
  int added = 0;
  int updated = 0;
  int unchanged = 0;
  int failed = 0;      // files not imported (entries with action "failed")
  // Tolerated oddities, each "FILE: what" (missing Consequences, unknown
  // sections, unresolved links...).
  std::vector<std::string> warnings;
};

// Imports every *.md / *.markdown / *.mdx file of `dir` (not recursive, but
// a subfolder's index.md or README.md is an ADR of its own; README, index and
// template files of `dir` itself skipped) as one decision each: Nygard,
// adr-tools, MADR (front matter or list metadata), log4brains, Docusaurus
// (front matter title, admonitions) and similar (src/mission/adr.h). The
// files that parse are written in one atomic write; a file that cannot be
// imported (invalid UTF-8, too large, no text at all...) is reported as a
// "failed" entry naming the reason, and the rest are imported (the caller
// signals a partial import). Ids derive from the mission and the file's
// absolute path: re-importing leaves unchanged files alone and stores a
// changed file as its next revision. Supersede links between files of the
// folder (status lines, sentences, admonitions, front matter, title tags)
// become supersede links both ways; one that names no file of the folder is
// a warning. Dates: the ADR's own, else (when the folder is in a git
// repository) the file's first commit.
Result<AdrImportReport> ImportAdrDirectory(MemoryLayer& engine, const Namespace& scope,
                                           const std::string& dir, const AdrImportOptions& options,
                                           const std::string& actor);

// One ADR handed over as text (REST and MCP, whose caller reads the files).
struct AdrFile {
  std::string name;  // the file name, e.g. "0005-use-udp.md" (no '/'), or FOLDER/index.md
                     // (index.mdx, index.markdown, README.md) for an ADR in a folder of its own
  std::string text;  // Markdown, at most 1 MiB
  TimeMs first_commit_at = 0;  // the file's first git commit (0: unknown)
  std::string last_author;     // the author of its latest commit ("": unknown)
  std::string read_error;      // non-empty: the file could not be read (a failure)
};

// What ImportAdrDirectory reads of `dir` before importing: the ADR files
// (each with its git dates when the folder is in a repository, or the
// read_error that makes it a failure), the folder as it names the records
// (`root`: the canonical absolute path) and the oddities of the walk. The
// command line reads a folder with it and hands the files to
// decision_import_adr. NotFound when `dir` is not a directory.
struct AdrDirectory {
  std::string root;
  std::vector<AdrFile> files;
  std::vector<std::string> warnings;
};
Result<AdrDirectory> ReadAdrDirectory(const std::string& dir);

// The same import from files given as text, as if they were the *.md files
// of `folder` (the provenance ref and the ids derive from folder + "/" +
// name, so the same folder and names update the decisions of an earlier
// import, whichever face made it). Names must be plain and distinct; the
// folder a path of plain names (relative, or absolute as a directory import
// stores it), without '.', '..' or empty parts: InvalidArgument otherwise.
Result<AdrImportReport> ImportAdrFiles(MemoryLayer& engine, const Namespace& scope, const std::string& folder,
                                       std::vector<AdrFile> files, const AdrImportOptions& options,
                                       const std::string& actor);

// --------------------------------------------------------------- principles

struct Principle {
  std::string principle_id;  // "P-7": a letter, then letters, digits, '.', '_', '-'; <= 32
  std::string statement;     // required; <= 2,000 bytes
  std::string rationale;     // <= 8,000 bytes
  std::string author;        // who wrote this version; one line
  int version = 1;           // 1, 2, ...; assigned
  int access_level = 0;
  // Read-only, from the stored record:
  std::string id;            // record id of this version (deterministic)
  bool current = true;       // false for versions replaced by a later edit
  Namespace ns;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  int64_t seq = 0;

  bool operator==(const Principle&) const = default;
};

// An edit names the version it changes. Empty statement / rationale keep
// the base version's.
struct PrincipleEdit {
  std::string principle_id;
  int base_version = 0;
  std::string statement;
  std::string rationale;
  std::string author;
  std::optional<int> access_level;  // nullopt: keep
};

// Adds version 1 of a new principle. AlreadyExists when the id is taken.
Result<Principle> AddPrinciple(MemoryLayer& engine, const Namespace& scope, const Principle& p,
                               const std::string& actor);
// Stores version base_version + 1 and marks the base version superseded, in
// one compare-and-swap write: of two concurrent edits of the same version
// (threads or processes) exactly one wins; the other gets Conflict with a
// message giving the current version. Every version stays readable.
Result<Principle> EditPrinciple(MemoryLayer& engine, const Namespace& scope, const PrincipleEdit& edit,
                                const std::string& actor);
// The current version (version 0) or a given one.
Result<Principle> GetPrinciple(MemoryLayer& engine, const Namespace& scope, const std::string& principle_id,
                               int version, const Asker& asker);
// Every version of one principle, oldest first (those above the asker's
// clearance left out; NotFound when none is visible).
Result<std::vector<Principle>> PrincipleVersions(MemoryLayer& engine, const Namespace& scope,
                                                 const std::string& principle_id, const Asker& asker);
// The current version of every principle of the mission, by principle id.
Result<std::vector<Principle>> ListPrinciples(MemoryLayer& engine, const Namespace& scope,
                                              const Asker& asker);

// ---------------------------------------------------------------- operators

struct OperatorRecord {
  std::string operator_id;   // an identifier (IsMissionIdentifier)
  int clearance = 0;         // 0..9
  std::string name;          // optional display name; one line, <= 200 characters
  // Read-only:
  std::string id;
  Namespace ns;              // mission empty: tenant-wide
  TimeMs updated_at = 0;
  int64_t seq = 0;
};

// Sets an operator's clearance for the mission of `scope`, or tenant-wide
// when scope.mission is empty (the one call that accepts an empty mission).
// Replaces the previous setting; the audit log keeps the change.
Result<OperatorRecord> SetOperator(MemoryLayer& engine, const Namespace& scope, const OperatorRecord& op,
                                   const std::string& actor);
// The operator's record for the mission, else the tenant-wide one;
// NotFound when neither exists.
Result<OperatorRecord> GetOperator(MemoryLayer& engine, const Namespace& scope,
                                   const std::string& operator_id);
// The operators set for the mission and tenant-wide (a mission setting
// shadows the tenant-wide one), by operator id.
Result<std::vector<OperatorRecord>> ListOperators(MemoryLayer& engine, const Namespace& scope);
// The operator's clearance: the mission setting, else the tenant-wide one,
// else 0 (also for an empty operator id).
Result<int> ClearanceOf(MemoryLayer& engine, const Namespace& scope, const std::string& operator_id);
// asker.clearance when set, else ClearanceOf(asker.operator_id).
Result<int> ResolveClearance(MemoryLayer& engine, const Namespace& scope, const Asker& asker);
// Who asks in a mission read made by `caller` (the one rule of every face):
// `operator_id` when one is named, at their registry clearance capped by
// the caller's; else the caller itself, at its clearance (kMaxAccessLevel
// when it has none). The clearance is always set.
Result<Asker> CallerAsker(MemoryLayer& engine, const Namespace& scope, const Caller& caller,
                          const std::string& operator_id);

// -------------------------------------------------------------- corrections

enum class CorrectionOutcome { kAccepted, kRejected, kModified };
// "accepted", "rejected", "modified".
std::string_view CorrectionOutcomeName(CorrectionOutcome o);
std::optional<CorrectionOutcome> ParseCorrectionOutcome(std::string_view s);

// A correction, only as a structured abstraction: never raw prompt or
// output text. correction_class, category and component are identifiers;
// summary is one sentence (<= 200 characters, no newlines, tabs or code
// fences, no sentence end before its last one).
struct Correction {
  std::string correction_class;  // "class" in JSON, e.g. "missing_context"
  std::string category;          // semantic category, e.g. "api_contract"
  std::string component;         // affected component
  CorrectionOutcome outcome = CorrectionOutcome::kModified;
  std::string summary;
  std::string retrieval_id;      // optional: the retrieval it corrects (a UUID)
  Criticality criticality = Criticality::kNormal;
  int access_level = 0;
  // Read-only, from the stored record:
  std::string id;
  std::string operator_id;       // scope.operator_id at add
  Namespace ns;
  TimeMs created_at = 0;
  int64_t seq = 0;

  bool operator==(const Correction&) const = default;
};

struct CorrectionFilter {
  std::string operator_id;                 // empty: every operator of the mission
  std::vector<std::string> components;     // any of them
  std::vector<std::string> classes;        // any of them
  std::vector<CorrectionOutcome> outcomes; // any of them
  std::string retrieval_id;                // only corrections of this retrieval
  TimeMs from = 0;                         // created_at >= from
  TimeMs to = 0;                           // created_at < to
  bool newest_first = false;
  int limit = 0;                           // 0: all
};

// Stores a correction of operator scope.operator_id (required). Refused
// (StatusCode::kRefused) when the summary is not one short sentence;
// InvalidArgument for other malformed fields.
Result<Correction> AddCorrection(MemoryLayer& engine, const Namespace& scope, const Correction& c,
                                 const std::string& actor);
Result<std::vector<Correction>> ListCorrections(MemoryLayer& engine, const Namespace& scope,
                                                const CorrectionFilter& filter, const Asker& asker);
// The correction `id` of any operator of the mission; NotFound when there is
// none or its access level is above the asker's clearance.
Result<Correction> GetCorrection(MemoryLayer& engine, const Namespace& scope, const std::string& id,
                                 const Asker& asker);

// ---------------------------------------------------- records <-> memories

// Reads a stored record back as its typed form. InvalidArgument when the
// record is not of that type or its body is malformed.
Result<Decision> DecisionFromMemory(const Memory& m);
Result<Principle> PrincipleFromMemory(const Memory& m);
Result<OperatorRecord> OperatorFromMemory(const Memory& m);
Result<Correction> CorrectionFromMemory(const Memory& m);

// Identifiers (component, correction class and category, operator ids): 1..64
// characters, no whitespace or control characters; ASCII letters, digits and
// "_-.:/" or any non-ASCII letter (so "навігація" is one).
bool IsMissionIdentifier(std::string_view s);

}  // namespace msp

#endif  // MSP_MISSION_H_
