// Document ingestion: walk, read, hash, extract, chunk and write each file's
// chunks in one atomic Commit (see ingest.h, docs/ingest.md).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "ingest/chunker.h"
#include "ingest/document.h"
#include "ingest/ingest.h"
#include "mission/records.h"
#include "util/uuid.h"
#include "working/tokens.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kChunkSource = "ingest";
constexpr std::string_view kChunkBodyType = "document_chunk";

struct FileToIngest {
  std::string path;   // absolute, canonical (a link out of the walk: the link's own path)
  bool named = false; // named on the command line (not found by a walk)
  // A walk found a symbolic link to this file outside the directory given:
  // it is reported as skipped, not read.
  std::string outside_target;
};

bool Hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.' && name != "." && name != "..";
}

std::string Canonical(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) return p.string();
  fs::path canon = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal().string() : canon.string();
}

// True when canonical path `p` is `root` or below it.
bool Within(const std::string& p, const std::string& root) {
  if (root == "/") return true;
  return p == root || (p.size() > root.size() && p.compare(0, root.size(), root) == 0 && p[root.size()] == '/');
}

// Every file to ingest, in order; NotFound for a missing path. A directory's
// walk does not follow symbolic links out of it (to /etc/passwd): those are
// listed with outside_target set.
Result<std::vector<FileToIngest>> CollectFiles(const std::vector<std::string>& paths) {
  if (paths.empty()) return Status::InvalidArgument("no paths to ingest: name files or directories");
  std::vector<FileToIngest> out;
  std::set<std::string> seen;
  for (const std::string& given : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(given, ec);
    if (ec || !fs::exists(st)) return Status::NotFound("no file or directory " + given);
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      std::vector<FileToIngest> escaping;
      const std::string root = Canonical(given);
      fs::recursive_directory_iterator it(given, fs::directory_options::skip_permission_denied, ec);
      if (ec) return Status::IoError(given + ": " + ec.message());
      for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
        if (ec) return Status::IoError(given + ": " + ec.message());
        if (Hidden(it->path())) {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file(ec)) continue;
        const std::string target = Canonical(it->path());
        if (it->is_symlink(ec) && !Within(target, root)) {
          escaping.push_back({fs::absolute(it->path()).lexically_normal().string(), false, target});
          continue;
        }
        found.push_back(target);
      }
      if (ec) return Status::IoError(given + ": " + ec.message());
      std::sort(found.begin(), found.end());
      for (std::string& f : found) {
        if (seen.insert(f).second) out.push_back({std::move(f), false, ""});
      }
      std::sort(escaping.begin(), escaping.end(),
                [](const FileToIngest& a, const FileToIngest& b) { return a.path < b.path; });
      for (FileToIngest& f : escaping) {
        if (seen.insert(f.path).second) out.push_back(std::move(f));
      }
    } else {
      std::string f = Canonical(given);
      if (seen.insert(f).second) {
        out.push_back({std::move(f), true, ""});
      } else {
        // Named again after a walk found it: it counts as named.
        for (FileToIngest& x : out) {
          if (x.path == f) x.named = true;
        }
      }
    }
  }
  return out;
}

Result<std::string> ReadBytes(const std::string& path, size_t max_bytes) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Status::IoError("cannot read: " + ec.message());
  if (size > max_bytes) {
    return Status::InvalidArgument(std::to_string(size) + " bytes; at most " + std::to_string(max_bytes) +
                                   " are ingested (ingest.max_file_bytes)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open for reading");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) return Status::IoError("read failed (the file changed?)");
  return bytes;
}

// Code points in text[0, byte).
size_t CharsBefore(std::string_view text, size_t byte, size_t from_byte, size_t from_chars) {
  size_t n = from_chars;
  for (size_t i = from_byte; i < byte && i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// What the stored chunk 0 of a file says about how it was made.
struct StoredFile {
  std::string sha256;
  size_t chunk_tokens = 0;
  size_t overlap_tokens = 0;
  std::string counter;
  int chunk_count = 0;
  int64_t seq = 0;
};

StoredFile StoredFileOf(const Memory& m) {
  StoredFile s;
  s.seq = m.seq;
  const json body = json::parse(m.body_json.empty() ? "{}" : m.body_json, nullptr, false);
  if (!body.is_object()) return s;
  s.sha256 = body.value("file_sha256", "");
  s.chunk_tokens = body.value("chunk_tokens", size_t{0});
  s.overlap_tokens = body.value("overlap_tokens", size_t{0});
  s.counter = body.value("counter", "");
  s.chunk_count = body.value("chunk_count", 0);
  return s;
}

std::string Detail(const Chunk& c, size_t char_start, size_t char_end) {
  std::string d;
  if (c.page > 0) d = "page " + std::to_string(c.page);
  if (!c.section.empty()) d += (d.empty() ? "" : " · ") + c.section;
  d += (d.empty() ? "" : " · ") + std::string("chars ") + std::to_string(char_start) + "-" + std::to_string(char_end);
  return d;
}

// Engine errors that concern one file's records (the file fails, the run
// goes on); others end the run.
bool FileLevelError(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kConflict ||
         s.code() == StatusCode::kNotFound || s.code() == StatusCode::kRefused;
}

class DocumentIngester {
 public:
  DocumentIngester(MemoryLayer& engine, const Namespace& ns, const TokenCounter& counter,
                   const DocumentIngestOptions& options, const std::string& actor)
      : engine_(engine), ns_(ns), counter_(counter), options_(options), actor_(actor) {
    chunking_.chunk_tokens = options.chunk_tokens;
    chunking_.overlap_tokens = options.overlap_tokens;
    chunking_.max_chunk_bytes = options.max_chunk_bytes;
  }

  const ChunkOptions& chunking() const { return chunking_; }

  // The outcome of one file; an error only when the run must end.
  Result<FileOutcome> Ingest(const FileToIngest& file) {
    FileOutcome out;
    out.path = file.path;
    auto fail = [&](const std::string& why) {
      out.action = "failed";
      out.error = why;
      return out;
    };
    if (!file.outside_target.empty()) {
      out.action = "skipped";
      out.error = "a symbolic link to " + file.outside_target + ", outside the directory given: not followed";
      return out;
    }
    std::optional<DocumentFormat> format = FormatFromExtension(file.path);
    if (!format && !file.named) {
      out.action = "skipped";
      out.error = "not a supported format (pdf, docx, md, html, txt)";
      return out;
    }
    Result<std::string> bytes = ReadBytes(file.path, options_.max_file_bytes);
    if (!bytes.ok()) return fail(bytes.status().message());
    if (!format) format = SniffFormat(*bytes);
    if (!format) return fail("unsupported format: not PDF, DOCX, Markdown, HTML or UTF-8 text");
    out.format = std::string(DocumentFormatName(*format));
    const std::string sha = Sha256Hex(*bytes);

    const std::string id0 = DocumentChunkId(ns_, file.path, 0);
    std::optional<StoredFile> stored;
    Result<Memory> old0 = engine_.Get(ns_, id0);
    if (old0.ok()) {
      if (old0->kind != Kind::kDocumentChunk) {
        return fail("record " + id0 + " exists and is a " + std::string(KindName(old0->kind)) +
                    ", not a document chunk");
      }
      stored = StoredFileOf(*old0);
      if (stored->sha256 == sha && stored->chunk_tokens == chunking_.chunk_tokens &&
          stored->overlap_tokens == chunking_.overlap_tokens && stored->counter == counter_.name()) {
        out.action = "unchanged";
        out.chunks = stored->chunk_count;
        return out;
      }
    } else if (old0.status().code() != StatusCode::kNotFound) {
      return old0.status();
    }

    Result<ExtractedDocument> doc = Extract(*format, *bytes);
    // The readers' module missing is no fault of the file: the run ends.
    if (!doc.ok() && doc.status().code() == StatusCode::kFailedPrecondition) return doc.status();
    if (!doc.ok()) return fail("damaged or unreadable " + out.format + ": " + doc.status().message());
    const std::vector<Chunk> chunks = ChunkDocument(*doc, counter_, chunking_);
    if (chunks.empty()) out.error = "no text found (a scanned or empty document?)";

    RecordBatch batch;
    batch.scope = ns_;
    batch.actor = actor_;
    batch.reason = "ingest " + file.path;
    const std::string file_name = fs::path(file.path).filename().string();
    size_t char_pos = 0, byte_pos = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      const Chunk& c = chunks[i];
      // Chunks overlap: count code points from the nearest known position.
      if (c.start < byte_pos) char_pos = byte_pos = 0;
      const size_t char_start = CharsBefore(doc->text, c.start, byte_pos, char_pos);
      const size_t char_end = CharsBefore(doc->text, c.end, c.start, char_start);
      char_pos = char_start;
      byte_pos = c.start;
      Memory m;
      m.id = DocumentChunkId(ns_, file.path, static_cast<int>(i));
      m.ns = ns_;
      m.layer = Layer::kDomain;
      m.kind = Kind::kDocumentChunk;
      m.text = doc->text.substr(c.start, c.end - c.start);
      m.source = std::string(kChunkSource);
      m.tags = {"document", out.format};
      for (const std::string& t : options_.tags) {
        if (std::find(m.tags.begin(), m.tags.end(), t) == m.tags.end()) m.tags.push_back(t);
      }
      m.access_level = options_.access_level;
      m.provenance = {{"document", file.path, Detail(c, char_start, char_end)}};
      json body = {{"type", kChunkBodyType},
                   {"path", file.path},
                   {"file_name", file_name},
                   {"format", out.format},
                   {"title", doc->title},
                   {"index", i},
                   {"chunk_count", chunks.size()},
                   {"page", c.page > 0 ? json(c.page) : json(nullptr)},
                   {"section", c.section},
                   {"start", c.start},
                   {"end", c.end},
                   {"char_start", char_start},
                   {"char_end", char_end},
                   {"tokens", c.tokens},
                   {"file_sha256", sha},
                   {"file_bytes", bytes->size()},
                   {"chunk_tokens", chunking_.chunk_tokens},
                   {"overlap_tokens", chunking_.overlap_tokens},
                   {"counter", counter_.name()}};
      m.body_json = body.dump();
      batch.puts.push_back(std::move(m));
      // Compare-and-swap on chunk 0, the file's anchor: a concurrent ingest
      // of the same file makes one of the two fail instead of mixing.
      batch.expected_seq.push_back(i == 0 ? (stored ? stored->seq : 0) : -1);
    }
    if (stored) {
      for (int i = static_cast<int>(chunks.size()); i < stored->chunk_count; ++i) {
        const std::string id = DocumentChunkId(ns_, file.path, i);
        Result<Memory> old = engine_.Get(ns_, id);
        if (old.ok()) {
          batch.deletes.push_back(id);
        } else if (old.status().code() != StatusCode::kNotFound) {
          return old.status();
        }
      }
    }
    out.action = stored ? "replaced" : "ingested";
    out.chunks = static_cast<int>(chunks.size());
    out.removed = static_cast<int>(batch.deletes.size());
    if (!options_.dry_run && (!batch.puts.empty() || !batch.deletes.empty())) {
      Result<std::vector<Memory>> written = engine_.Commit(batch);
      if (!written.ok()) {
        if (!FileLevelError(written.status())) return written.status();
        out.chunks = 0;
        out.removed = 0;
        return fail(written.status().code() == StatusCode::kConflict
                        ? "changed by another writer meanwhile; run again (" + written.status().message() + ")"
                        : "not stored: " + written.status().message());
      }
    }
    return out;
  }

 private:
  MemoryLayer& engine_;
  Namespace ns_;
  const TokenCounter& counter_;
  const DocumentIngestOptions& options_;
  std::string actor_;
  ChunkOptions chunking_;
};

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

std::string DocumentChunkId(const Namespace& ns, const std::string& path, int index) {
  // \x1f (unit separator) cannot occur in a tenant or mission name.
  return NameUuid("document-chunk\x1f" + ns.tenant + "\x1f" + ns.mission + "\x1f" + path + "\x1f" +
                  std::to_string(index));
}

Result<DocumentIngestReport> IngestDocuments(MemoryLayer& engine, const Namespace& scope,
                                             const std::vector<std::string>& paths, const TokenCounter& counter,
                                             const DocumentIngestOptions& options, const std::string& actor,
                                             const DocumentProgress& progress) {
  MSP_RETURN_IF_ERROR(RequireMission(scope));
  if (options.access_level < 0 || options.access_level > kMaxAccessLevel) {
    return Status::InvalidArgument("access level " + std::to_string(options.access_level) + " is outside 0.." +
                                   std::to_string(kMaxAccessLevel));
  }
  DocumentIngester ingester(engine, MissionNamespace(scope), counter, options, actor);
  MSP_RETURN_IF_ERROR(ValidateChunkOptions(ingester.chunking()));
  MSP_ASSIGN_OR_RETURN(std::vector<FileToIngest> files, CollectFiles(paths));
  DocumentIngestReport report;
  for (size_t i = 0; i < files.size(); ++i) {
    MSP_ASSIGN_OR_RETURN(FileOutcome out, ingester.Ingest(files[i]));
    if (out.action == "ingested" || out.action == "replaced") {
      ++report.ingested;
      if (out.action == "replaced") ++report.replaced;
      report.chunks_written += out.chunks;
      report.chunks_deleted += out.removed;
    } else if (out.action == "unchanged") {
      ++report.unchanged;
    } else if (out.action == "failed") {
      ++report.failed;
    } else {
      ++report.skipped;
    }
    if (progress) progress(i + 1, files.size(), out);
    report.files.push_back(std::move(out));
  }
  return report;
}

}  // namespace msp
