// Git ingestion through libgit2: a revision walk, each commit's first-parent
// diff for the files it touched, one event record per commit (git_record.h).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

#include <nlohmann/json.hpp>

#include "ingest/git_record.h"
#include "ingest/ingest.h"
#include "lazy/git_handles.h"
#include "mission/records.h"
#include "util/utf8.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kBatchCommits = 256;
constexpr size_t kFilesInText = 50;
constexpr size_t kMaxMessageBytes = 64 * 1024;

// `s` with every invalid UTF-8 byte replaced by U+FFFD and NULs dropped.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    size_t bad = 0;
    if (IsValidUtf8(s, &bad)) {
      out += s;
      break;
    }
    out += s.substr(0, bad);
    out += "\xEF\xBF\xBD";
    s.remove_prefix(bad + 1);
  }
  out.erase(std::remove(out.begin(), out.end(), '\0'), out.end());
  return out;
}

// The first `max` bytes of `s` cut at a character boundary, with "…" when cut.
std::string CutUtf8(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  return std::string(Utf8PrefixBytes(s, max)) + "\xE2\x80\xA6";
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  size_t b = 0;
  while (b < s.size() && (s[b] == '\n' || s[b] == '\r')) ++b;
  return s.substr(b);
}

std::string Hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof(buf), oid);
  return buf;
}

// The paths `commit` changed against its first parent (against the empty
// tree for a root commit), sorted.
Result<std::vector<std::string>> FilesTouched(git_repository* repo, git_commit* commit) {
  git_tree* raw_tree = nullptr;
  if (git_commit_tree(&raw_tree, commit) != 0) return Status::IoError("reading a commit's tree: " + LastGitError());
  TreePtr tree(raw_tree);
  TreePtr parent_tree;
  if (git_commit_parentcount(commit) > 0) {
    git_commit* raw_parent = nullptr;
    if (git_commit_parent(&raw_parent, commit, 0) != 0) {
      return Status::IoError("reading a commit's parent: " + LastGitError());
    }
    CommitPtr parent(raw_parent);
    git_tree* raw = nullptr;
    if (git_commit_tree(&raw, parent.get()) != 0) return Status::IoError("reading a tree: " + LastGitError());
    parent_tree.reset(raw);
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  git_diff* raw_diff = nullptr;
  if (git_diff_tree_to_tree(&raw_diff, repo, parent_tree.get(), tree.get(), &opts) != 0) {
    return Status::IoError("diffing a commit: " + LastGitError());
  }
  DiffPtr diff(raw_diff);
  std::vector<std::string> files;
  const size_t n = git_diff_num_deltas(diff.get());
  for (size_t i = 0; i < n; ++i) {
    const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
    const char* path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
    if (path != nullptr) files.push_back(ValidUtf8(path));
  }
  return files;
}

Result<Memory> CommitRecord(git_repository* repo, git_commit* commit, const std::string& identity,
                            const Namespace& ns, const GitIngestOptions& options) {
  const std::string hash = Hex(git_commit_id(commit));
  MSP_ASSIGN_OR_RETURN(std::vector<std::string> files, FilesTouched(repo, commit));
  const git_signature* author = git_commit_author(commit);
  const TimeMs time = static_cast<TimeMs>(git_commit_time(commit)) * 1000;
  const char* raw_message = git_commit_message(commit);
  const std::string message = CutUtf8(ValidUtf8(raw_message == nullptr ? "" : raw_message), kMaxMessageBytes);
  const char* raw_summary = git_commit_summary(commit);
  std::string subject = Trimmed(ValidUtf8(raw_summary == nullptr ? "" : raw_summary));
  if (subject.empty()) subject = "(no message)";
  const char* raw_body = git_commit_body(commit);
  const std::string body = Trimmed(ValidUtf8(raw_body == nullptr ? "" : raw_body));

  std::string files_line;
  if (!files.empty()) {
    files_line = "Files: ";
    for (size_t i = 0; i < files.size() && i < kFilesInText; ++i) {
      if (i > 0) files_line += ", ";
      files_line += files[i];
    }
    if (files.size() > kFilesInText) files_line += ", ... (" + std::to_string(files.size() - kFilesInText) + " more)";
  }
  // Keep the text within the engine's limit: the body gives way first.
  const size_t budget = options.max_text_bytes > 0 ? options.max_text_bytes : 32768;
  std::string text = CutUtf8(subject, budget / 4);
  const size_t fixed = text.size() + 2 + (files_line.empty() ? 0 : files_line.size() + 2) + 8;
  if (!body.empty()) {
    text += "\n\n" + CutUtf8(body, budget > fixed ? budget - fixed : 0);
    if (!files_line.empty()) text += "\n" + CutUtf8(files_line, budget / 4);
  } else if (!files_line.empty()) {
    text += "\n\n" + CutUtf8(files_line, budget / 4);
  }

  json parents = json::array();
  for (unsigned i = 0; i < git_commit_parentcount(commit); ++i) parents.push_back(Hex(git_commit_parent_id(commit, i)));
  json files_json = json::array();
  for (size_t i = 0; i < files.size() && i < options.max_files; ++i) files_json.push_back(files[i]);

  Memory m;
  m.id = GitCommitRecordId(ns, identity, hash);
  m.ns = ns;
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kEvent;
  m.source = std::string(kGitCommitSource);
  m.tags = {std::string(kGitCommitTag)};
  m.valid_at = time;
  m.text = std::move(text);
  m.access_level = options.access_level;
  m.provenance = {{"commit", hash, identity}};
  m.body_json = json{{"type", kGitCommitBodyType},
                     {"hash", hash},
                     {"author", ValidUtf8(author != nullptr && author->name != nullptr ? author->name : "")},
                     {"email", ValidUtf8(author != nullptr && author->email != nullptr ? author->email : "")},
                     {"time", time},
                     {"subject", subject},
                     {"message", message},
                     {"files", std::move(files_json)},
                     {"repo", identity},
                     {"parents", std::move(parents)}}
                    .dump();
  return m;
}

// Pushes what to walk; InvalidArgument when the revision does not resolve.
// Sets *empty for a repository without commits.
Status PushRevision(git_repository* repo, git_revwalk* walk, const std::string& rev, bool* empty) {
  *empty = false;
  if (rev.empty()) {
    if (git_repository_head_unborn(repo) == 1 || git_repository_is_empty(repo) == 1) {
      *empty = true;
      return Status::Ok();
    }
    if (git_revwalk_push_head(walk) != 0) return Status::InvalidArgument("cannot read HEAD: " + LastGitError());
    return Status::Ok();
  }
  if (rev.find("..") != std::string::npos) {
    if (rev.find("...") != std::string::npos) {
      return Status::InvalidArgument("revision range '" + rev + "': symmetric ranges (A...B) are not supported; use A..B");
    }
    if (git_revwalk_push_range(walk, rev.c_str()) != 0) {
      return Status::InvalidArgument("revision range '" + rev + "' does not resolve: " + LastGitError());
    }
    return Status::Ok();
  }
  git_object* raw = nullptr;
  if (git_revparse_single(&raw, repo, rev.c_str()) != 0) {
    return Status::InvalidArgument("revision '" + rev + "' does not resolve: " + LastGitError());
  }
  ObjectPtr obj(raw);
  git_object* raw_commit = nullptr;
  if (git_object_peel(&raw_commit, obj.get(), GIT_OBJECT_COMMIT) != 0) {
    return Status::InvalidArgument("revision '" + rev + "' is not a commit: " + LastGitError());
  }
  ObjectPtr commit(raw_commit);
  if (git_revwalk_push(walk, git_object_id(commit.get())) != 0) {
    return Status::InvalidArgument("cannot walk from '" + rev + "': " + LastGitError());
  }
  return Status::Ok();
}

}  // namespace

Result<GitIngestReport> IngestGitRepository(MemoryLayer& engine, const Namespace& scope,
                                            const std::string& repo_path, const GitIngestOptions& options,
                                            const std::string& actor, const GitProgress& progress) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (options.access_level < 0 || options.access_level > kMaxAccessLevel) {
    return Status::InvalidArgument("access level " + std::to_string(options.access_level) + " is outside 0.." +
                                   std::to_string(kMaxAccessLevel));
  }
  if (options.max_count < 0) return Status::InvalidArgument("max count must be >= 0");
  if (options.max_files < 1) return Status::InvalidArgument("max files per commit must be >= 1");
  std::error_code ec;
  if (repo_path.empty() || !fs::exists(repo_path, ec)) return Status::NotFound("no such path " + repo_path);
  const std::string abs = fs::absolute(repo_path, ec).lexically_normal().string();

  GitLibrary library;
  git_repository* raw_repo = nullptr;
  const int rc = git_repository_open_ext(&raw_repo, abs.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc == GIT_ENOTFOUND) {
    return Status::InvalidArgument(repo_path + " is not a git repository (give the work tree that holds .git, or "
                                   "the git directory itself)");
  }
  if (rc != 0) return Status::InvalidArgument(repo_path + ": cannot open the repository: " + LastGitError());
  RepoPtr repo(raw_repo);
  const char* where = git_repository_is_bare(repo.get()) ? git_repository_path(repo.get())
                                                          : git_repository_workdir(repo.get());
  std::string identity = where == nullptr ? abs : where;
  while (identity.size() > 1 && identity.back() == '/') identity.pop_back();

  git_revwalk* raw_walk = nullptr;
  if (git_revwalk_new(&raw_walk, repo.get()) != 0) return Status::IoError("revision walk: " + LastGitError());
  WalkPtr walk(raw_walk);
  git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  bool empty = false;
  MSP_RETURN_IF_ERROR(PushRevision(repo.get(), walk.get(), options.rev, &empty));

  GitIngestReport report;
  report.repo = identity;
  if (empty) return report;

  std::vector<git_oid> oids;
  git_oid oid;
  int next = 0;
  while ((next = git_revwalk_next(&oid, walk.get())) == 0) {
    if (options.since > 0) {
      git_commit* raw = nullptr;
      if (git_commit_lookup(&raw, repo.get(), &oid) != 0) return Status::IoError("reading a commit: " + LastGitError());
      CommitPtr c(raw);
      if (static_cast<TimeMs>(git_commit_time(c.get())) * 1000 < options.since) continue;
    }
    oids.push_back(oid);
    if (options.max_count > 0 && oids.size() >= static_cast<size_t>(options.max_count)) break;
  }
  if (next != 0 && next != GIT_ITEROVER) return Status::IoError("revision walk: " + LastGitError());
  report.walked = static_cast<int>(oids.size());

  const Namespace ns = MissionNamespace(scope);
  RecordBatch batch;
  batch.scope = ns;
  batch.actor = actor;
  batch.reason = "ingest git " + identity;
  auto flush = [&]() -> Status {
    if (batch.puts.empty()) return Status::Ok();
    if (!options.dry_run) {
      MSP_ASSIGN_OR_RETURN(std::vector<Memory> stored, engine.Commit(batch));
      (void)stored;
    }
    batch.puts.clear();
    batch.expected_seq.clear();
    return Status::Ok();
  };
  for (size_t i = 0; i < oids.size(); ++i) {
    const std::string hash = Hex(&oids[i]);
    const std::string id = GitCommitRecordId(ns, identity, hash);
    Result<Memory> old = engine.Get(ns, id);
    if (old.ok()) {
      ++report.existing;
    } else if (old.status().code() != StatusCode::kNotFound) {
      return old.status();
    } else {
      git_commit* raw = nullptr;
      if (git_commit_lookup(&raw, repo.get(), &oids[i]) != 0) {
        return Status::IoError("reading commit " + hash + ": " + LastGitError());
      }
      CommitPtr commit(raw);
      MSP_ASSIGN_OR_RETURN(Memory m, CommitRecord(repo.get(), commit.get(), identity, ns, options));
      batch.puts.push_back(std::move(m));
      batch.expected_seq.push_back(0);
      report.written_hashes.push_back(hash);
      ++report.written;
      if (batch.puts.size() >= kBatchCommits) MSP_RETURN_IF_ERROR(flush());
    }
    if (progress) progress(i + 1, oids.size());
  }
  MSP_RETURN_IF_ERROR(flush());
  return report;
}

}  // namespace msp
