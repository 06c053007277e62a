// Test fixtures for ingest_test, all made in the test: a small PDF written
// byte by byte (with a correct xref table), a DOCX package written with
// libzip, and git repositories scripted with libgit2.
#ifndef MSP_INGEST_FIXTURES_H_
#define MSP_INGEST_FIXTURES_H_

#include <string>
#include <utility>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp::testing {

// A valid PDF with one page per entry of `pages`; each page shows its lines
// (ASCII, no parentheses or backslashes) in Helvetica.
std::string MakePdf(const std::vector<std::vector<std::string>>& pages);

// A DOCX package at `path`: one paragraph per {style id, text} ("" for the
// body style; "Heading1", "Heading2" for headings), with a styles.xml naming
// them.
Status WriteDocx(const std::string& path, const std::vector<std::pair<std::string, std::string>>& paragraphs);

// Writes `bytes` to `path` (parents created).
Status WriteFile(const std::string& path, const std::string& bytes);

// A MemoryLayer that forwards to another and records every Commit batch;
// with fail_commits set, Commit fails (kIoError) without writing.
class RecordingLayer final : public MemoryLayer {
 public:
  explicit RecordingLayer(MemoryLayer& inner) : inner_(inner) {}
  std::vector<RecordBatch> batches;
  bool fail_commits = false;

  Result<std::vector<Memory>> Commit(const RecordBatch& b) override {
    batches.push_back(b);
    if (fail_commits) return Status::IoError("injected commit failure");
    return inner_.Commit(b);
  }
  Result<WriteResult> Write(const WriteRequest& r) override { return inner_.Write(r); }
  Result<std::vector<WriteResult>> WriteMany(const std::vector<WriteRequest>& r) override {
    return inner_.WriteMany(r);
  }
  Result<Memory> AddEpisode(const EpisodeStep& s) override { return inner_.AddEpisode(s); }
  Result<std::vector<Memory>> LastSteps(const Namespace& ns, const std::string& s, int k) override {
    return inner_.LastSteps(ns, s, k);
  }
  Result<ConsolidationReport> EndSession(const Namespace& ns, const std::string& s) override {
    return inner_.EndSession(ns, s);
  }
  Result<WriteResult> AddFact(const FactRequest& r) override { return inner_.AddFact(r); }
  Result<WriteResult> SupersedeFact(const Namespace& ns, const std::string& id, const FactRequest& r) override {
    return inner_.SupersedeFact(ns, id, r);
  }
  Result<std::vector<Memory>> History(const Namespace& ns, const std::string& id) override {
    return inner_.History(ns, id);
  }
  Result<std::vector<SearchHit>> Retrieve(const RetrieveRequest& r) override { return inner_.Retrieve(r); }
  Result<Memory> Get(const Namespace& ns, const std::string& id) override { return inner_.Get(ns, id); }
  Result<std::vector<Memory>> List(const ListRequest& r) override { return inner_.List(r); }
  Status Delete(const Namespace& ns, const std::string& id, const std::string& reason,
                const std::string& actor) override {
    return inner_.Delete(ns, id, reason, actor);
  }
  Result<ConsolidationReport> Consolidate(const Namespace& ns, const std::string& s) override {
    return inner_.Consolidate(ns, s);
  }
  Status Reindex() override { return inner_.Reindex(); }
  Result<ImportReport> Import(std::istream& in, const std::string& actor) override {
    return inner_.Import(in, actor);
  }
  Result<int64_t> Export(const Namespace& ns, std::ostream& out) override { return inner_.Export(ns, out); }
  Result<Stats> GetStats(const Namespace& ns, std::optional<int> level) override { return inner_.GetStats(ns, level); }
  Result<std::vector<AuditEvent>> Audit(const Namespace& ns, const std::string& id, int limit) override {
    return inner_.Audit(ns, id, limit);
  }

 private:
  MemoryLayer& inner_;
};

// A git repository built commit by commit.
class ScriptedRepo {
 public:
  // Initialises a repository with a work tree at `dir`.
  static Result<ScriptedRepo> Init(const std::string& dir);
  ScriptedRepo(ScriptedRepo&& other) noexcept;
  ScriptedRepo& operator=(ScriptedRepo&&) = delete;
  ~ScriptedRepo();

  // Writes (path -> content) and removes (path with content "<delete>") files
  // in the work tree, stages exactly those paths and commits on HEAD with
  // the given author and time (seconds). Returns the 40-hex hash.
  Result<std::string> Commit(const std::vector<std::pair<std::string, std::string>>& changes,
                             const std::string& message, const std::string& author, int64_t time_s);
  const std::string& dir() const { return dir_; }

 private:
  ScriptedRepo(std::string dir, void* repo) : dir_(std::move(dir)), repo_(repo) {}
  std::string dir_;
  void* repo_ = nullptr;  // git_repository*
};

}  // namespace msp::testing

#endif  // MSP_INGEST_FIXTURES_H_
