// Cutting an extracted document into chunks of at most N tokens with an
// overlap, for document ingestion.
#ifndef MSP_INGEST_CHUNKER_H_
#define MSP_INGEST_CHUNKER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "ingest/document.h"
#include "working/tokens.h"

namespace msp {

struct ChunkOptions {
  size_t chunk_tokens = 512;     // at most this many tokens per chunk (>= 64)
  size_t overlap_tokens = 64;    // tokens a chunk repeats from the previous one (< chunk_tokens / 2)
  size_t max_chunk_bytes = 32768;  // and at most this many bytes (>= 256)
};

// Checks the bounds above; InvalidArgument naming the ingest.* setting.
Status ValidateChunkOptions(const ChunkOptions& options);

// One chunk: the text [start, end) of ExtractedDocument::text.
struct Chunk {
  size_t start = 0;
  size_t end = 0;
  int page = 0;          // from its segment
  std::string section;   // from its segment
  size_t tokens = 0;     // counter.Count of the chunk's text
};

// Cuts every segment of `doc` into chunks, in order. A chunk never crosses a
// segment (a page or a section), starts and ends on non-blank characters,
// holds at most options.chunk_tokens tokens by `counter` and at most
// max_chunk_bytes bytes, and prefers to end at a paragraph break, else at a
// sentence end, in its last half. The next chunk of the same segment starts
// so that it repeats at most overlap_tokens tokens of the previous one, and
// always starts later than it. A segment holding only whitespace gives no
// chunk. REQUIRES: ValidateChunkOptions(options).ok().
std::vector<Chunk> ChunkDocument(const ExtractedDocument& doc, const TokenCounter& counter,
                                 const ChunkOptions& options);

}  // namespace msp

#endif  // MSP_INGEST_CHUNKER_H_
