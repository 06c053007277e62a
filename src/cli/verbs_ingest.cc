// `msp ingest PATH...` (documents into the mission's domain layer) and
// `msp ingest --git REPO` (commits into its workflow layer); docs/ingest.md.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "ingest/ingest.h"
#include "working/tokens.h"

namespace msp {
namespace {

// A one-line progress bar on standard error, drawn only when it is a
// terminal (and the CLI writes to the process's own stderr).
class ProgressBar {
 public:
  explicit ProgressBar(const Invocation& inv)
      : enabled_(inv.err == &std::cerr && isatty(fileno(stderr)) == 1), err_(*inv.err) {}

  void Draw(size_t done, size_t total, const std::string& label) {
    if (!enabled_ || total == 0) return;
    constexpr size_t kWidth = 30;
    const size_t filled = done * kWidth / total;
    std::string bar(filled, '#');
    bar.append(kWidth - filled, ' ');
    std::string name = label;
    if (name.size() > 40) name = "..." + name.substr(name.size() - 37);
    err_ << "\r\033[K[" << bar << "] " << done << "/" << total << " " << name << std::flush;
    drawn_ = true;
  }
  // Clears the bar before other output.
  void Clear() {
    if (drawn_) err_ << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  bool enabled_;
  std::ostream& err_;
  bool drawn_ = false;
};

nlohmann::json DocumentReportJson(const DocumentIngestReport& r) {
  nlohmann::json files = nlohmann::json::array();
  for (const FileOutcome& f : r.files) {
    files.push_back({{"path", f.path}, {"format", f.format}, {"action", f.action}, {"chunks", f.chunks},
                     {"removed", f.removed}, {"message", f.error}});
  }
  return {{"ingested", r.ingested}, {"replaced", r.replaced},           {"unchanged", r.unchanged},
          {"failed", r.failed},     {"skipped", r.skipped},             {"chunks_written", r.chunks_written},
          {"chunks_deleted", r.chunks_deleted}, {"files", std::move(files)}};
}

Status RunGitIngest(Invocation& inv, MemoryLayer& engine, int access_level, bool dry_run) {
  GitIngestOptions o;
  o.rev = inv.flags.Get("--rev");
  MSP_ASSIGN_OR_RETURN(o.since, TimeFlag(inv, "--since"));
  Result<int64_t> max_count = inv.flags.GetInt("--max-count", 0, 1, std::numeric_limits<int>::max());
  if (!max_count.ok()) return Usage(inv, max_count.status().message());
  o.max_count = static_cast<int>(*max_count);
  o.max_text_bytes = inv.config.options.policy.max_text_bytes;
  o.access_level = access_level;
  o.dry_run = dry_run;
  ProgressBar bar(inv);
  MSP_ASSIGN_OR_RETURN(GitIngestReport r,
                       IngestGitRepository(engine, inv.ns, inv.flags.Get("--git"), o, inv.actor,
                                           [&](size_t done, size_t total) { bar.Draw(done, total, "commits"); }));
  bar.Clear();
  if (inv.json) {
    PrintJson(inv, {{"repo", r.repo},
                    {"walked", r.walked},
                    {"written", r.written},
                    {"existing", r.existing},
                    {"dry_run", dry_run},
                    {"written_hashes", r.written_hashes}});
    return Status::Ok();
  }
  *inv.out << r.repo << ": " << r.walked << " commits walked, " << (dry_run ? "would write " : "wrote ")
           << r.written << " new, " << r.existing << " already stored\n";
  return Status::Ok();
}

}  // namespace

Status RunIngest(Invocation& inv) {
  const bool git = inv.flags.Has("--git");
  if (git && !inv.flags.positionals.empty()) {
    return Usage(inv, "give either PATH... (documents) or --git REPO, not both");
  }
  if (!git && inv.flags.positionals.empty()) return Usage(inv, "name the files or directories to ingest");
  if (!git) {
    for (const char* flag : {"--rev", "--since", "--max-count"}) {
      if (inv.flags.Has(flag)) return Usage(inv, std::string(flag) + " goes with --git");
    }
  }
  if (inv.ns.mission.empty()) return Usage(inv, "--mission is required: ingested records belong to a mission");
  Result<int64_t> level = inv.flags.GetInt("--access-level", 0, 0, kMaxAccessLevel);
  if (!level.ok()) return Usage(inv, level.status().message());
  const bool dry_run = inv.flags.Has("--dry-run");
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  if (git) return RunGitIngest(inv, *engine, static_cast<int>(*level), dry_run);

  const Settings& options = inv.config.options;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<TokenCounter> counter, MakeTokenCounter(options.tokens));
  DocumentIngestOptions o;
  o.chunk_tokens = static_cast<size_t>(options.ingest.chunk_tokens);
  o.overlap_tokens = static_cast<size_t>(options.ingest.overlap_tokens);
  o.max_file_bytes = options.ingest.max_file_bytes;
  o.max_chunk_bytes = options.policy.max_text_bytes > 0 ? options.policy.max_text_bytes : size_t{1} << 20;
  o.access_level = static_cast<int>(*level);
  o.tags = inv.flags.All("--tag");
  o.dry_run = dry_run;

  ProgressBar bar(inv);
  auto progress = [&](size_t done, size_t total, const FileOutcome& f) {
    bar.Clear();
    if (!inv.json) {
      if (f.action == "failed") {
        *inv.err << "msp: failed: " << f.path << ": " << f.error << "\n" << std::flush;
      } else if (f.action != "skipped" || inv.flags.Has("--verbose")) {
        *inv.out << f.action << "  " << f.chunks << " chunks  " << f.path;
        if (f.removed > 0) *inv.out << "  (" << f.removed << " old chunks removed)";
        if (!f.error.empty()) *inv.out << "  (" << f.error << ")";
        *inv.out << "\n" << std::flush;
      }
    }
    bar.Draw(done, total, f.path);
  };
  MSP_ASSIGN_OR_RETURN(DocumentIngestReport r,
                       IngestDocuments(*engine, inv.ns, inv.flags.positionals, *counter, o, inv.actor, progress));
  bar.Clear();
  if (r.failed > 0) inv.exit_code = kExitFailure;
  if (inv.json) {
    nlohmann::json j = DocumentReportJson(r);
    j["dry_run"] = dry_run;
    j["counter"] = counter->name();
    PrintJson(inv, j);
    return Status::Ok();
  }
  *inv.out << (dry_run ? "dry run: " : "") << "files: " << r.ingested << " ingested (" << r.replaced
           << " replaced), " << r.unchanged << " unchanged, " << r.failed << " failed, " << r.skipped
           << " skipped; chunks: " << r.chunks_written << " written, " << r.chunks_deleted << " deleted\n";
  return Status::Ok();
}

}  // namespace msp
