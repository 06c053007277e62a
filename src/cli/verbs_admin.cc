// Administrative verbs: init, import, export, reindex, demo.
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli/cli.h"
#include "cli/demo.h"
#include "codec/memory_json.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR (or /tmp), removed when this goes away.
class TempDir {
 public:
  static Result<TempDir> Make(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Status::IoError("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
    }
    return TempDir(tmpl);
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

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

Status RunImport(Invocation& inv) {
  const std::string& file = inv.flags.positionals[0];
  std::ifstream in_file;
  std::istream* in = inv.in;
  if (file != "-") {
    std::error_code ec;
    if (!fs::exists(file, ec)) return Status::NotFound("import file '" + file + "' does not exist");
    in_file.open(file, std::ios::binary);
    if (!in_file) return Status::IoError("cannot read import file '" + file + "': " + std::strerror(errno));
    in = &in_file;
  }
  if (const std::string oversize = inv.flags.Get("--on-oversize"); !oversize.empty()) {
    if (oversize != "refuse" && oversize != "split" && oversize != "truncate") {
      return Status::InvalidArgument("--on-oversize must be refuse, split or truncate, got '" + oversize + "'");
    }
    inv.config.options.policy.on_oversize = oversize;
  }
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/true));
  MSP_ASSIGN_OR_RETURN(ImportReport report, engine->Import(*in, inv.actor));
  if (inv.json) {
    PrintJson(inv, ImportReportToJson(report));
  } else {
    *inv.out << "imported " << report.applied << " records from " << (file == "-" ? "standard input" : file) << " ("
             << report.lines << " lines";
    if (report.split > 0) *inv.out << ", " << report.split << " split";
    if (report.truncated > 0) *inv.out << ", " << report.truncated << " truncated";
    *inv.out << ")\n";
  }
  return Status::Ok();
}

Status RunExport(Invocation& inv) {
  const std::string file = inv.flags.positionals.empty() ? "-" : inv.flags.positionals[0];
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  if (file == "-") {
    MSP_ASSIGN_OR_RETURN(int64_t n, engine->Export(inv.ns, *inv.out));
    (void)n;
    return Status::Ok();
  }
  // Written beside the target and renamed over it, so a failed export leaves
  // no partial file.
  const std::string tmp = file + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IoError("cannot write export file '" + tmp + "': " + std::strerror(errno));
  Result<int64_t> n = engine->Export(inv.ns, out);
  out.close();
  std::error_code ec;
  if (!n.ok() || !out) {
    fs::remove(tmp, ec);
    if (!n.ok()) return n.status();
    return Status::IoError("cannot write export file '" + tmp + "'");
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::IoError("cannot move the export into '" + file + "': " + ec.message());
  }
  *inv.out << "exported " << *n << " records to " << file << "\n";
  return Status::Ok();
}

Status RunReindex(Invocation& inv) {
  MSP_ASSIGN_OR_RETURN(auto engine, OpenEngine(inv, /*create=*/false));
  MSP_RETURN_IF_ERROR(engine->Reindex());
  *inv.out << "reindexed " << inv.config.options.store.data_dir << "\n";
  return Status::Ok();
}

Status RunDemoVerb(Invocation& inv) {
  Settings options = inv.config.options;
  // --data-dir names the demo's directory; otherwise a temporary one.
  std::optional<TempDir> tmp;
  if (inv.config.OriginOf("store.data_dir").source != SettingSource::kFlag) {
    MSP_ASSIGN_OR_RETURN(TempDir t, TempDir::Make("msp-demo-"));
    tmp.emplace(std::move(t));
    options.store.data_dir = tmp->path() + "/demo";
  }
  inv.exit_code = RunDemo(options, *inv.out, *inv.err);
  if (tmp) {
    *inv.out << "\n(the demo ran in a temporary directory, now removed; pass --data-dir DIR to keep its store)\n";
  }
  return Status::Ok();
}

}  // namespace msp
