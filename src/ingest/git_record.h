// The record format of an ingested git commit (docs/ingest.md, "Git
// commits"): a contract other parts (the orchestrator) read. Header-only, so
// a reader needs only msp_util, not the ingestion libraries.
//
//   kind       Kind::kEvent            layer   Layer::kWorkflow
//   source     "git"                   tags    {"git-commit"}
//   ns         {tenant, mission} of the ingesting scope
//   id         GitCommitRecordId(ns, repo identity, 40-hex hash)
//   valid_at   the commit time (committer), ms
//   text       the subject line; then, when the message has a body, a blank
//              line and the body; then, when the commit touches files, a
//              line "Files: a, b, c" (after a blank line when there is no
//              body; at most 50 names, then "... (N more)")
//   body_json  {"type":"git_commit","hash","author","email","time","subject",
//               "message","files":[...],"repo","parents":[...]}
//   provenance [{type "commit", ref hash, detail repo identity}]
//
// The repository identity is the absolute path of its workdir without a
// trailing '/' (for a bare repository, of its git directory).
#ifndef MSP_INGEST_GIT_RECORD_H_
#define MSP_INGEST_GIT_RECORD_H_

#include <string>
#include <string_view>

#include "msp/types.h"
#include "util/uuid.h"

namespace msp {

inline constexpr std::string_view kGitCommitSource = "git";
inline constexpr std::string_view kGitCommitTag = "git-commit";
inline constexpr std::string_view kGitCommitBodyType = "git_commit";

// NameUuid("git-commit" US tenant US mission US repo US hash) (US = \x1f):
// each tenant and mission holds its own copy of a repository's commits, so
// one never finds its ids taken by another's records.
inline std::string GitCommitRecordId(const Namespace& ns, std::string_view repo, std::string_view hash) {
  std::string key = "git-commit\x1f";
  key += ns.tenant;
  key += '\x1f';
  key += ns.mission;
  key += '\x1f';
  key += repo;
  key += '\x1f';
  key += hash;
  return NameUuid(key);
}

}  // namespace msp

#endif  // MSP_INGEST_GIT_RECORD_H_
