// Ingestion into a mission's memory (docs/ingest.md):
//   - documents (PDF, DOCX, Markdown, HTML, plain text) -> chunks in the
//     domain layer (Kind::kDocumentChunk, Layer::kDomain), with provenance;
//   - a git repository's commits -> events in the workflow layer
//     (Kind::kEvent, Layer::kWorkflow, source "git"; git_record.h).
//
// Both write through the public engine API (MemoryLayer::Commit) into the
// mission namespace {tenant, mission} of `scope` (a mission is required),
// with deterministic record ids, so running them again is idempotent.
// Thread-compatible: one call at a time per MemoryLayer is the intended use;
// concurrent runs on the same files are safe (compare-and-swap) but one of
// them may report a conflict for a file.
#ifndef MSP_INGEST_INGEST_H_
#define MSP_INGEST_INGEST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

class TokenCounter;

// ------------------------------------------------------------------ documents

struct DocumentIngestOptions {
  size_t chunk_tokens = 512;        // ingest.chunk_tokens
  size_t overlap_tokens = 64;       // ingest.overlap_tokens
  size_t max_file_bytes = 64u << 20;  // ingest.max_file_bytes: larger files fail
  size_t max_chunk_bytes = 32768;   // policy.max_text_bytes: a record's text limit
  int access_level = 0;             // every chunk's Memory::access_level (0..9)
  std::vector<std::string> tags;    // added to every chunk's tags
  bool dry_run = false;             // extract and chunk, write nothing
};

// What happened to one file.
struct FileOutcome {
  std::string path;        // absolute
  std::string format;      // "pdf", ...; empty when unknown
  std::string action;      // "ingested", "replaced", "unchanged", "failed", "skipped"
  int chunks = 0;          // chunks the file now has (written for ingested / replaced)
  int removed = 0;         // old chunks deleted (replaced)
  std::string error;       // failed / skipped: why
};

struct DocumentIngestReport {
  int ingested = 0;        // new files and changed files (replaced)
  int replaced = 0;        // of them, files whose earlier chunks were replaced
  int unchanged = 0;       // same content and chunking as stored: skipped
  int failed = 0;          // damaged, unsupported (named explicitly), unreadable
  int skipped = 0;         // in a directory walk: not a supported format
  int64_t chunks_written = 0;
  int64_t chunks_deleted = 0;
  std::vector<FileOutcome> files;  // in processing order
};

// Progress: after each file, `done` of `total` files, and the file's outcome.
using DocumentProgress = std::function<void(size_t done, size_t total, const FileOutcome& file)>;

// Ingests `paths` (files, and directories walked recursively in name order;
// hidden files and directories — names starting with '.' — are skipped, and
// so are, in a walk, files whose extension names no supported format).
//
// Every path must exist: a missing one is NotFound before anything is
// written. Then each file on its own: it is read (up to max_file_bytes),
// hashed (SHA-256), and skipped as "unchanged" when the stored chunks come
// from the same bytes and the same chunking (chunk_tokens, overlap_tokens,
// the counter's name); else extracted, chunked and written in ONE
// MemoryLayer::Commit that puts every chunk and deletes the file's earlier
// chunks beyond the new count (so a reader sees the old chunks or the new
// ones, never a mix). A damaged or unsupported file is "failed" with the
// reason and the others go on; the call itself still returns OK (the report
// says what failed). Errors of the engine other than a conflict on one file
// (the store is gone, ...) end the run and are returned.
//
// Chunk records: see docs/ingest.md (id DocumentChunkId(ns, path, index),
// body type "document_chunk", provenance {"document", path, "page 3 · chars
// 120-2040"}).
Result<DocumentIngestReport> IngestDocuments(MemoryLayer& engine, const Namespace& scope,
                                             const std::vector<std::string>& paths, const TokenCounter& counter,
                                             const DocumentIngestOptions& options, const std::string& actor,
                                             const DocumentProgress& progress = nullptr);

// The id of chunk `index` (0-based) of the file at absolute path `path` in
// the mission namespace `ns`.
std::string DocumentChunkId(const Namespace& ns, const std::string& path, int index);

// SHA-256 of `bytes`, 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

// ------------------------------------------------------------------------ git

struct GitIngestOptions {
  // What to walk: a revision ("main", "HEAD~5", a hash) or a range "A..B"
  // (commits reachable from B but not from A). Empty: HEAD.
  std::string rev;
  TimeMs since = 0;       // > 0: only commits whose commit time is at or after it
  int max_count = 0;      // > 0: at most this many commits, newest first
  size_t max_files = 1000;  // files listed per commit in the body (the text's Files line shows 50)
  size_t max_text_bytes = 32768;  // policy.max_text_bytes: the body of the text gives way first
  int access_level = 0;
  bool dry_run = false;
};

struct GitIngestReport {
  std::string repo;          // the repository identity (absolute workdir, or git dir when bare)
  int walked = 0;            // commits the walk gave (after since / max_count)
  int written = 0;           // new commit records
  int existing = 0;          // already stored: skipped
  std::vector<std::string> written_hashes;  // newest first
};

// Progress: after each commit, `done` of `total`.
using GitProgress = std::function<void(size_t done, size_t total)>;

// Stores the commits of the repository at `repo_path` (its workdir or git
// dir; the path itself, parents are not searched) as events (git_record.h).
// Commits already stored (by id) are skipped; new ones are written in
// batches of at most 256, each one atomic Commit. NotFound for a path that
// does not exist; InvalidArgument for one that is not a git repository or a
// revision that does not resolve; both before anything is written. An empty
// repository (no commits yet) gives an empty report.
Result<GitIngestReport> IngestGitRepository(MemoryLayer& engine, const Namespace& scope,
                                            const std::string& repo_path, const GitIngestOptions& options,
                                            const std::string& actor, const GitProgress& progress = nullptr);

}  // namespace msp

#endif  // MSP_INGEST_INGEST_H_
