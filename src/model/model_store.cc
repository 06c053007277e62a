// Pull, list and remove the native embedder's models (model_store.h).
#include "model/model_store.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "embed/native/native_loader.h"
#include "net/http_client.h"
#include "util/owned_fd.h"
#include "util/time.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The files of a sentence-transformers model that the native embedder reads
// (docs/embeddings.md, "The model directory"). One of the tokenizer files
// must be there.
struct FileSpec {
  const char* path;
  bool required;
};
constexpr FileSpec kFiles[] = {
    {"model.safetensors", true},       {"config.json", true},
    {"tokenizer.json", false},         {"vocab.txt", false},
    {"tokenizer_config.json", false},  {"sentence_bert_config.json", false},
    {"1_Pooling/config.json", false},
};
constexpr const char* kWeights = "model.safetensors";
constexpr const char* kManifest = "model.json";

std::string ModelsDir(const std::string& data_dir) { return (fs::path(data_dir) / "models").string(); }
std::string PartialDir(const std::string& data_dir, const std::string& name) {
  return (fs::path(ModelsDir(data_dir)) / ("." + name + ".partial")).string();
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The model's name from its base URL: the last path segment, or the
// repository's for a Hugging Face ".../<repo>/resolve/<revision>".
std::string NameFromUrl(const std::string& url) {
  std::string path = url.substr(url.find("://") + 3);
  size_t slash = path.find('/');
  path = slash == std::string::npos ? "" : path.substr(slash);
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '/');) {
    if (!part.empty()) parts.push_back(part);
  }
  if (parts.size() >= 3 && parts[parts.size() - 2] == "resolve") return parts[parts.size() - 3];
  return parts.empty() ? "" : parts.back();
}

// "bytes 100-999/1000" -> {100, 1000}; total -1 for "*".
bool ParseContentRange(const std::string& v, int64_t* first, int64_t* total) {
  long long a = 0, b = 0;
  char tail[32] = {0};
  if (std::sscanf(v.c_str(), "bytes %lld-%lld/%31s", &a, &b, tail) != 3) return false;
  *first = a;
  *total = std::string(tail) == "*" ? -1 : std::atoll(tail);
  return true;
}

std::string Header(const net::DownloadReply& reply, const char* name) {
  auto it = reply.headers.find(name);
  return it == reply.headers.end() ? std::string() : it->second;
}

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? -1 : static_cast<int64_t>(size);
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};

// Downloads base/rel to dest (through dest.part). *missing is set (and Ok
// returned) for a 404 of an optional file.
Status FetchFile(const net::HttpClient& client, const PullOptions& options, const std::string& rel,
                 const std::string& dest, bool required, bool* missing) {
  *missing = false;
  const std::string url = client.base_url().Join("/" + rel);
  if (fs::exists(dest)) return Status::Ok();  // complete in an earlier pull
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  if (ec) return Status::IoError("cannot create " + fs::path(dest).parent_path().string() + ": " + ec.message());
  const std::string part = dest + ".part";
  std::string last_failure;
  int wait_ms = options.retry_wait_ms;
  for (int attempt = 0; attempt <= options.retries; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      wait_ms = std::min(wait_ms * 2, 30000);
    }
    const int64_t offset = std::max<int64_t>(FileSize(part), 0);
    std::vector<std::pair<std::string, std::string>> headers;
    if (offset > 0) headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-");
    std::unique_ptr<std::FILE, FileCloser> out;
    int64_t total = -1;
    int64_t written = offset;
    int64_t resumed_from = 0;  // where this attempt's bytes start
    std::string sink_error;
    const auto start = std::chrono::steady_clock::now();
    auto report = [&](bool done) {
      if (!options.progress) return;
      PullProgress p;
      p.file = rel;
      p.bytes = written;
      p.total = total;
      p.fetched = written - resumed_from;
      p.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      p.done = done;
      options.progress(p);
    };
    // Opens the part on the first bytes of a 2xx reply: appended to for a
    // 206 that continues it, started again for a 200.
    auto open = [&](const net::DownloadReply& reply) -> bool {
      bool append = false;
      if (reply.status == 206) {
        int64_t first = 0;
        if (!ParseContentRange(Header(reply, "content-range"), &first, &total) || first != offset) {
          sink_error = "a partial reply starting elsewhere than byte " + std::to_string(offset) + " (Content-Range '" +
                       Header(reply, "content-range") + "')";
          return false;
        }
        append = true;
      } else {
        const std::string length = Header(reply, "content-length");
        if (!length.empty()) total = std::atoll(length.c_str());
      }
      written = append ? offset : 0;
      resumed_from = written;
      out.reset(std::fopen(part.c_str(), append ? "ab" : "wb"));
      if (!out) {
        sink_error = "cannot write " + part;
        return false;
      }
      return true;
    };
    Result<net::DownloadReply> got = client.Download(
        "/" + rel, headers, [&](const net::DownloadReply& reply, std::string_view data) {
          if (!out && !open(reply)) return false;
          if (std::fwrite(data.data(), 1, data.size(), out.get()) != data.size()) {
            sink_error = "cannot write " + part + " (disk full?)";
            return false;
          }
          written += static_cast<int64_t>(data.size());
          report(false);
          return true;
        });
    if (!sink_error.empty()) return Status::IoError("downloading " + url + ": " + sink_error);
    if (!got.ok()) {
      if (got.status().code() != StatusCode::kUnavailable) return got.status();
      last_failure = got.status().message();
      continue;  // resumed by the next attempt
    }
    const net::DownloadReply& reply = *got;
    if (reply.status >= 200 && reply.status < 300) {
      if (!out && !open(reply)) return Status::IoError("downloading " + url + ": " + sink_error);
      if (std::fflush(out.get()) != 0) return Status::IoError("cannot write " + part);
      out.reset();
      if (total >= 0 && written != total) {
        last_failure = "got " + std::to_string(written) + " of " + std::to_string(total) + " bytes";
        continue;
      }
      report(true);
      fs::rename(part, dest, ec);
      if (ec) return Status::IoError("cannot rename " + part + ": " + ec.message());
      return Status::Ok();
    }
    if (reply.status == 416 && offset > 0) {
      // The part may be the whole file already; else it is started again.
      const std::string range = Header(reply, "content-range");  // "bytes */SIZE"
      const size_t slash = range.find('/');
      if (slash != std::string::npos && std::atoll(range.c_str() + slash + 1) == offset) {
        written = offset;
        report(true);
        fs::rename(part, dest, ec);
        if (ec) return Status::IoError("cannot rename " + part + ": " + ec.message());
        return Status::Ok();
      }
      fs::remove(part, ec);
      last_failure = "HTTP 416 for a Range from byte " + std::to_string(offset);
      continue;
    }
    if (reply.status == 404 && !required) {
      *missing = true;
      return Status::Ok();
    }
    net::HttpResponse response;
    response.status = reply.status;
    response.body = reply.error_body;
    if (reply.status == 404) {
      return Status::NotFound(url + " returned HTTP 404: the model's " + rel +
                              " is not there (is the URL the directory of a model's files?)");
    }
    if (reply.status == 408 || reply.status == 429 || reply.status >= 500) {
      last_failure = net::HttpStatusError(url, response).message();
      continue;
    }
    return net::HttpStatusError(url, response);
  }
  return Status::Unavailable("downloading " + url + " failed after " + std::to_string(options.retries + 1) +
                             " attempt(s); last: " + last_failure + ". What arrived is kept in " + part +
                             ": run the same `msp model pull` again to resume");
}

Result<json> ReadManifest(const std::string& dir) {
  std::ifstream in(fs::path(dir) / kManifest);
  if (!in) return Status::NotFound("no " + std::string(kManifest) + " in " + dir);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption(std::string(kManifest) + " in " + dir + " is not a JSON object");
  return j;
}

}  // namespace

const std::vector<CatalogueModel>& ModelCatalogue() {
  // No checksum is given: the published files could not be downloaded where
  // this was written, and a checksum not computed from them would be a guess.
  // model.json records the sha256 each pull computed.
  static const std::vector<CatalogueModel> catalogue = {
      {"all-MiniLM-L6-v2", "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main", ""},
      {"bge-small-en-v1.5", "https://huggingface.co/BAAI/bge-small-en-v1.5/resolve/main", ""},
      {"e5-small-v2", "https://huggingface.co/intfloat/e5-small-v2/resolve/main", ""},
      {"gte-small", "https://huggingface.co/thenlper/gte-small/resolve/main", ""},
  };
  return catalogue;
}

Status CheckModelName(const std::string& name) {
  if (name.empty() || name.size() > 200 || name.front() == '.' ||
      name.find_first_of(std::string("/\\\0", 3)) != std::string::npos) {
    return Status::InvalidArgument("bad model name '" + name +
                                   "': a model name is a plain directory name (no '/' or '\\', not starting with '.')");
  }
  return Status::Ok();
}

Result<std::string> Sha256OfFile(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::IoError("cannot read " + path);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return Status::Internal("SHA-256 unavailable");
  std::vector<char> buf(1 << 20);
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) {
    if (EVP_DigestUpdate(ctx.get(), buf.data(), n) != 1) return Status::Internal("SHA-256 failed");
  }
  if (std::ferror(f.get())) return Status::IoError("cannot read " + path);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1) return Status::Internal("SHA-256 failed");
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

Result<PulledModel> PullModel(const std::string& data_dir, const PullOptions& options) {
  PulledModel pulled;
  std::string expected = Lower(options.sha256);
  if (!expected.empty() && !IsHex64(expected)) {
    return Status::InvalidArgument("--sha256 '" + options.sha256 + "' is not 64 hex digits");
  }
  if (options.source.find("://") != std::string::npos) {
    pulled.source = options.source;
    pulled.name = options.name.empty() ? NameFromUrl(options.source) : options.name;
    if (pulled.name.empty()) {
      return Status::InvalidArgument("cannot name the model from '" + options.source + "': pass --name NAME");
    }
  } else {
    const auto& catalogue = ModelCatalogue();
    auto it = std::find_if(catalogue.begin(), catalogue.end(), [&](const CatalogueModel& m) { return m.name == options.source; });
    if (it == catalogue.end()) {
      std::string names;
      for (const CatalogueModel& m : catalogue) names += (names.empty() ? "" : ", ") + m.name;
      return Status::InvalidArgument("unknown model '" + options.source + "': give one of " + names +
                                     ", or the base URL of a model's files (http:// or https://)");
    }
    pulled.source = it->base_url;
    pulled.name = options.name.empty() ? it->name : options.name;
    if (expected.empty()) expected = it->weights_sha256;
  }
  MSP_RETURN_IF_ERROR(CheckModelName(pulled.name));
  net::HttpClientOptions http;
  http.base_url = pulled.source;
  http.max_retries = 0;
  http.read_timeout_ms = 60000;
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<net::HttpClient> client, net::HttpClient::Create(http));

  pulled.dir = (fs::path(ModelsDir(data_dir)) / pulled.name).string();
  std::error_code ec;
  if (fs::exists(pulled.dir, ec)) {
    return Status::AlreadyExists("model '" + pulled.name + "' is already in " + pulled.dir +
                                 "; `msp model remove " + pulled.name + "` first to pull it again");
  }
  // One pull of a name at a time: <data_dir>/models/.<name>.lock, held
  // (flock) until this pull returns.
  fs::create_directories(ModelsDir(data_dir), ec);
  if (ec) return Status::IoError("cannot create " + ModelsDir(data_dir) + ": " + ec.message());
  const std::string lock_path = (fs::path(ModelsDir(data_dir)) / ("." + pulled.name + ".lock")).string();
  OwnedFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid()) return Status::IoError("cannot open " + lock_path);
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return Status::Conflict("another `msp model pull` of '" + pulled.name + "' is running (it holds " + lock_path + ")");
  }
  if (fs::exists(pulled.dir, ec)) {  // pulled while this one waited for the lock
    return Status::AlreadyExists("model '" + pulled.name + "' is already in " + pulled.dir);
  }
  // The partial directory of an earlier pull is resumed when it came from
  // the same source, else started again.
  const std::string partial = PartialDir(data_dir, pulled.name);
  const std::string source_file = (fs::path(partial) / ".source").string();
  {
    std::ifstream in(source_file);
    std::string earlier;
    std::getline(in, earlier);
    if (earlier != pulled.source) fs::remove_all(partial, ec);
  }
  fs::create_directories(partial, ec);
  if (ec) return Status::IoError("cannot create " + partial + ": " + ec.message());
  {
    std::ofstream out(source_file, std::ios::trunc);
    out << pulled.source << "\n";
    if (!out) return Status::IoError("cannot write " + source_file);
  }
  auto give_up = [&](const Status& s) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    return s;
  };

  bool have_tokenizer = false;
  for (const FileSpec& spec : kFiles) {
    const std::string dest = (fs::path(partial) / spec.path).string();
    bool missing = false;
    Status s = FetchFile(*client, options, spec.path, dest, spec.required, &missing);
    if (!s.ok()) {
      // A part that stopped in the middle is kept for the next pull; a wrong
      // source is not.
      if (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kIoError) return s;
      return give_up(s.WithContext("pulling model '" + pulled.name + "' from " + pulled.source));
    }
    if (missing) continue;
    if (std::string(spec.path) == "tokenizer.json" || std::string(spec.path) == "vocab.txt") have_tokenizer = true;
    ModelFile file;
    file.path = spec.path;
    file.bytes = FileSize(dest);
    MSP_ASSIGN_OR_RETURN(file.sha256, Sha256OfFile(dest));
    if (file.path == kWeights && !expected.empty()) {
      if (file.sha256 != expected) {
        return give_up(Status::InvalidArgument("the sha256 of " + client->base_url().Join(std::string("/") + kWeights) +
                                               " is " + file.sha256 + ", not the expected " + expected +
                                               "; the download was deleted"));
      }
      file.verified = true;
    }
    pulled.files.push_back(std::move(file));
  }
  if (!have_tokenizer) {
    return give_up(Status::NotFound("pulling model '" + pulled.name + "' from " + pulled.source +
                                    ": neither tokenizer.json nor vocab.txt is there"));
  }
  // A broken download is an error now, not when a store first embeds.
  Result<std::unique_ptr<Embedder>> opened = OpenNativeEmbedder(partial, 1, "auto");
  if (!opened.ok()) {
    return give_up(opened.status().WithContext("the files of model '" + pulled.name + "' from " + pulled.source +
                                               " do not open as a native model; the download was deleted"));
  }
  pulled.embedder_id = (*opened)->id();
  opened->reset();

  json manifest = {{"name", pulled.name},
                   {"source", pulled.source},
                   {"pulled_at", FormatIso8601(WallClockMs())},
                   {"embedder_id", pulled.embedder_id},
                   {"files", json::array()}};
  for (const ModelFile& f : pulled.files) {
    manifest["files"].push_back({{"path", f.path}, {"bytes", f.bytes}, {"sha256", f.sha256}, {"verified", f.verified}});
  }
  {
    const std::string path = (fs::path(partial) / kManifest).string();
    std::ofstream out(path, std::ios::trunc);
    out << manifest.dump(2) << "\n";
    out.close();
    if (!out) return Status::IoError("cannot write " + path);
  }
  fs::remove(source_file, ec);
  fs::rename(partial, pulled.dir, ec);
  if (ec) return Status::IoError("cannot rename " + partial + " to " + pulled.dir + ": " + ec.message());
  // The embedder id names the directory; the model's is its name.
  Result<std::unique_ptr<Embedder>> final_open = OpenNativeEmbedder(pulled.dir, 1, "auto");
  if (final_open.ok()) pulled.embedder_id = (*final_open)->id();
  return pulled;
}

Result<std::vector<ModelEntry>> ListModels(const std::string& data_dir, bool check) {
  std::vector<ModelEntry> models;
  const std::string dir = ModelsDir(data_dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return models;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.empty() || name.front() == '.') continue;
    ModelEntry m;
    m.name = name;
    m.dir = e.path().string();
    std::error_code walk_ec;
    for (const fs::directory_entry& f : fs::recursive_directory_iterator(e.path(), walk_ec)) {
      if (f.is_regular_file()) m.bytes += static_cast<int64_t>(f.file_size());
    }
    Result<json> manifest = ReadManifest(m.dir);
    if (manifest.ok()) {
      m.source = manifest->value("source", "");
      m.pulled_at = manifest->value("pulled_at", "");
    }
    if (check) {
      Result<std::unique_ptr<Embedder>> opened = OpenNativeEmbedder(m.dir, 1, "auto");
      m.opens = opened.ok();
      if (opened.ok()) {
        m.embedder_id = (*opened)->id();
      } else {
        m.error = opened.status().message();
      }
    }
    models.push_back(std::move(m));
  }
  if (ec) return Status::IoError("cannot list " + dir + ": " + ec.message());
  std::sort(models.begin(), models.end(), [](const ModelEntry& a, const ModelEntry& b) { return a.name < b.name; });
  return models;
}

Status RemoveModel(const std::string& data_dir, const std::string& name) {
  MSP_RETURN_IF_ERROR(CheckModelName(name));
  const fs::path dir = fs::path(ModelsDir(data_dir)) / name;
  const fs::path partial = PartialDir(data_dir, name);
  std::error_code ec;
  const bool have = fs::is_directory(dir, ec);
  const bool have_partial = fs::is_directory(partial, ec);
  if (!have && !have_partial) {
    return Status::NotFound("no model '" + name + "' in " + ModelsDir(data_dir) + " (`msp model list` shows them)");
  }
  fs::remove_all(dir, ec);
  if (ec) return Status::IoError("cannot remove " + dir.string() + ": " + ec.message());
  fs::remove_all(partial, ec);
  if (ec) return Status::IoError("cannot remove " + partial.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace msp
