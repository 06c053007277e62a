// `msp model pull|list|remove`: the native embedder's models in the data
// directory (model/model_store.h; docs/embeddings.md, "Pulling a model").
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "model/model_store.h"

namespace msp {
namespace {

std::string ModelMegabytes(int64_t bytes) {
  char buf[32];
  if (bytes < 1000000) {
    std::snprintf(buf, sizeof buf, "%.1f KB", static_cast<double>(bytes) / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  }
  return buf;
}

// One line on a terminal's standard error, rewritten at most 5 times a
// second: "model.safetensors: 12.3 MB of 90.9 MB (13.5%), 4.2 MB/s".
class PullProgressLine {
 public:
  explicit PullProgressLine(Invocation& inv)
      : enabled_(inv.err == &std::cerr && isatty(fileno(stderr)) == 1), err_(*inv.err) {}

  void Update(const PullProgress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!p.done && last_ && now - *last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    std::string line = p.file + ": " + ModelMegabytes(p.bytes);
    if (p.total > 0) {
      char pct[48];
      std::snprintf(pct, sizeof pct, " of %s (%.1f%%)", ModelMegabytes(p.total).c_str(),
                    100.0 * static_cast<double>(p.bytes) / static_cast<double>(p.total));
      line += pct;
    }
    if (p.elapsed_ms > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, ", %.1f MB/s",
                    static_cast<double>(p.fetched) / 1e3 / static_cast<double>(p.elapsed_ms));
      line += rate;
    }
    err_ << "\r\033[K" << line << (p.done ? "\n" : "") << std::flush;
    if (p.done) last_.reset();
  }

 private:
  bool enabled_;
  std::ostream& err_;
  std::optional<std::chrono::steady_clock::time_point> last_;
};

}  // namespace

Status RunModelPull(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(int64_t retries, inv.flags.GetInt("--retries", 3, 0, 100));
  PullOptions options;
  options.source = inv.flags.positionals[0];
  options.name = inv.flags.Get("--name");
  options.sha256 = inv.flags.Get("--sha256");
  options.retries = static_cast<int>(retries);
  PullProgressLine progress(inv);
  options.progress = [&](const PullProgress& p) { progress.Update(p); };
  MSP_ASSIGN_OR_RETURN(PulledModel pulled, PullModel(inv.config.options.store.data_dir, options));
  int64_t bytes = 0;
  for (const ModelFile& f : pulled.files) bytes += f.bytes;
  if (inv.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const ModelFile& f : pulled.files) {
      files.push_back({{"path", f.path}, {"bytes", f.bytes}, {"sha256", f.sha256}, {"verified", f.verified}});
    }
    PrintJson(inv, {{"name", pulled.name},
                    {"dir", pulled.dir},
                    {"source", pulled.source},
                    {"embedder_id", pulled.embedder_id},
                    {"bytes", bytes},
                    {"files", files}});
    return Status::Ok();
  }
  std::string weights;
  for (const ModelFile& f : pulled.files) {
    if (f.path == "model.safetensors") weights = f.sha256 + (f.verified ? " (verified)" : " (recorded, not verified)");
  }
  *inv.out << "pulled " << pulled.name << " (" << pulled.files.size() << " files, " << ModelMegabytes(bytes) << ") into "
           << pulled.dir << "\nmodel.safetensors sha256 " << weights << "\nit opens as " << pulled.embedder_id
           << "; use it with embedder.provider = \"native\", embedder.model = \"" << pulled.name << "\"\n";
  return Status::Ok();
}

Status RunModelList(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(std::vector<ModelEntry> models, ListModels(inv.config.options.store.data_dir, true));
  if (inv.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ModelEntry& m : models) {
      out.push_back({{"name", m.name},     {"dir", m.dir},     {"bytes", m.bytes},
                     {"source", m.source}, {"pulled_at", m.pulled_at}, {"opens", m.opens},
                     {"embedder_id", m.embedder_id}, {"error", m.error}});
    }
    PrintJson(inv, out);
    return Status::Ok();
  }
  if (models.empty()) {
    *inv.out << "no models in " << inv.config.options.store.data_dir << "/models (`msp model pull NAME|URL`)\n";
    return Status::Ok();
  }
  for (const ModelEntry& m : models) {
    *inv.out << m.name << "  " << ModelMegabytes(m.bytes) << "  " << (m.source.empty() ? "(no model.json)" : m.source)
             << "  " << (m.opens ? "opens as " + m.embedder_id : "does not open: " + m.error) << "\n";
  }
  return Status::Ok();
}

Status RunModelRemove(Invocation& inv) {
  const std::string& name = inv.flags.positionals[0];
  MSP_RETURN_IF_ERROR(RemoveModel(inv.config.options.store.data_dir, name));
  if (inv.json) {
    PrintJson(inv, {{"removed", name}});
  } else {
    *inv.out << "removed model " << name << "\n";
  }
  return Status::Ok();
}

}  // namespace msp
