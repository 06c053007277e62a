// `msp reembed`: rebuild every record's vector with the configured embedder
// (MemoryLayer::Reembed), with progress on standard error.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

#include "cli/cli.h"

namespace msp {
namespace {

// "1234/5000 records (24.7%), 350 records/s, about 11 s left".
std::string ProgressLine(const ReembedProgress& p) {
  std::string line = std::to_string(p.done) + "/" + std::to_string(p.total) + " records";
  if (p.total > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.1f%%)", 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total));
    line += pct;
  }
  if (p.embedded > 0 && p.elapsed_ms > 0) {
    const double rate = static_cast<double>(p.embedded) * 1000.0 / static_cast<double>(p.elapsed_ms);
    char buf[96];
    std::snprintf(buf, sizeof buf, ", %.0f records/s", rate);
    line += buf;
    const int64_t left = p.total - p.done;
    if (left > 0 && rate > 0) {
      std::snprintf(buf, sizeof buf, ", about %.0f s left", static_cast<double>(left) / rate);
      line += buf;
    }
  }
  return line;
}

nlohmann::json ProgressJson(const ReembedProgress& p) {
  return {{"from_embedder", p.from_embedder}, {"to_embedder", p.to_embedder}, {"total", p.total},
          {"done", p.done},                   {"embedded", p.embedded},       {"elapsed_ms", p.elapsed_ms},
          {"finished", p.finished}};
}

}  // namespace

Status RunReembed(Invocation& inv) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  MSP_ASSIGN_OR_RETURN(int64_t batch_size, inv.flags.GetInt("--batch-size", 0, 1, kIntMax));
  MSP_ASSIGN_OR_RETURN(int64_t max_batches, inv.flags.GetInt("--max-batches", 0, 1, kIntMax));
  const Settings& options = inv.config.options;
  const std::string& dir = options.store.data_dir;
  const std::string named = "data directory '" + dir + "' (store.data_dir, from " +
                            inv.config.OriginOf("store.data_dir").where + ")";
  std::error_code ec;
  if (options.store.backend != StoreBackend::kPostgres && !std::filesystem::is_directory(dir, ec)) {
    return Status::NotFound("no msp store in " + named + "; pass --data-dir");
  }
  ReembedOptions reembed;
  reembed.batch_size = static_cast<int>(batch_size);
  reembed.max_batches = static_cast<int>(max_batches);

  // One line at the start, then at most one a second, and the last one.
  std::ostream& err = *inv.err;
  std::optional<std::chrono::steady_clock::time_point> last_line;
  bool started = false;
  auto progress = [&](const ReembedProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (!started) {
      err << "reembed: " << (p.from_embedder.empty() ? std::string("(none)") : p.from_embedder) << " -> "
          << p.to_embedder << ", " << (p.total - p.done) << " of " << p.total << " records to embed\n";
      started = true;
    }
    if (p.finished || !last_line || now - *last_line >= std::chrono::seconds(1)) {
      err << "reembed: " << ProgressLine(p) << "\n" << std::flush;
      last_line = now;
    }
  };
  Result<ReembedProgress> done = MemoryLayer::Reembed(options, reembed, progress);
  if (!done.ok()) {
    return done.status().WithContext("reembed of the store in " + named +
                                     " stopped (what is done is kept; run `msp reembed` again to continue)");
  }
  const ReembedProgress& p = *done;
  if (inv.json) {
    PrintJson(inv, ProgressJson(p));
    return Status::Ok();
  }
  if (p.finished) {
    *inv.out << "re-embedded " << p.embedded << " records with " << p.to_embedder << " (" << p.total
             << " in the store); the store now uses " << p.to_embedder << "\n";
  } else {
    *inv.out << "stopped after " << max_batches << " batches: " << p.done << " of " << p.total
             << " records carry " << p.to_embedder << "; run `msp reembed` again to continue\n";
  }
  return Status::Ok();
}

}  // namespace msp
