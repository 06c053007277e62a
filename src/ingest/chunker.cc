// The chunker (see chunker.h). A segment is cut into units (a run of
// whitespace and the word after it, at most kMaxUnitBytes bytes), each
// costing counter.Count(unit); chunks are packed from whole units.
#include "ingest/chunker.h"

#include <string_view>

#include "util/text.h"

namespace msp {
namespace {

// A unit never costs more than its bytes, so with chunk_tokens >= 64 every
// unit fits in a chunk.
constexpr size_t kMaxUnitBytes = 64;
constexpr size_t kMinChunkTokens = 64;
constexpr size_t kMinChunkBytes = 256;

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

struct Unit {
  size_t begin = 0;        // the leading whitespace
  size_t word = 0;         // where the word starts (== end for whitespace only)
  size_t end = 0;
  size_t cost = 0;
  bool paragraph_before = false;  // the leading whitespace holds a blank line
  bool sentence_end = false;      // the word ends a sentence
};

std::vector<Unit> UnitsOf(std::string_view text, size_t begin, size_t end, const TokenCounter& counter) {
  std::vector<Unit> units;
  size_t i = begin;
  while (i < end) {
    Unit u;
    u.begin = i;
    size_t newlines = 0;
    while (i < end && IsAsciiSpace(text[i]) && i - u.begin < kMaxUnitBytes) {
      if (text[i] == '\n') ++newlines;
      ++i;
    }
    u.paragraph_before = newlines >= 2;
    u.word = i;
    bool split = false;
    while (i < end && !IsAsciiSpace(text[i])) {
      if (i - u.begin >= kMaxUnitBytes) {
        // Cut an over-long word at a character boundary.
        while (i > u.word && IsContinuation(text[i])) --i;
        if (i == u.word) {  // a lone sequence longer than the limit cannot happen in UTF-8
          ++i;
          while (i < end && IsContinuation(text[i])) ++i;
        }
        split = true;
        break;
      }
      ++i;
    }
    u.end = i;
    if (!split && u.end > u.word) {
      size_t last = u.end - 1;
      while (last > u.word && (text[last] == '"' || text[last] == '\'' || text[last] == ')')) --last;
      u.sentence_end = text[last] == '.' || text[last] == '!' || text[last] == '?' || text[last] == ':';
    }
    u.cost = counter.Count(text.substr(u.begin, u.end - u.begin));
    units.push_back(u);
  }
  return units;
}

void ChunkSegment(const ExtractedDocument& doc, const DocSegment& seg, const TokenCounter& counter,
                  const ChunkOptions& options, std::vector<Chunk>* out) {
  const std::string_view text = doc.text;
  const std::vector<Unit> units = UnitsOf(text, seg.start, std::min(seg.end, text.size()), counter);
  const size_t n = units.size();
  size_t first = 0;
  // Skip leading whitespace-only units.
  while (first < n && units[first].word == units[first].end) ++first;
  while (first < n) {
    // Pack units [first, last] while they fit.
    const size_t start = units[first].word;
    size_t tokens = units[first].cost;
    size_t last = first;
    while (last + 1 < n) {
      const Unit& next = units[last + 1];
      if (tokens + next.cost > options.chunk_tokens || next.end - start > options.max_chunk_bytes) break;
      tokens += next.cost;
      ++last;
    }
    const bool at_end = last + 1 == n;
    if (!at_end) {
      // Prefer a paragraph break, else a sentence end, in the last half.
      size_t half_tokens = 0, cut = last, best_para = n, best_sentence = n;
      for (size_t c = first; c <= last; ++c) {
        half_tokens += units[c].cost;
        if (half_tokens * 2 < tokens) continue;
        if (units[c + 1].paragraph_before) best_para = c;
        if (units[c].sentence_end) best_sentence = c;
      }
      if (best_para != n) {
        cut = best_para;
      } else if (best_sentence != n) {
        cut = best_sentence;
      }
      last = cut;
    }
    // The units' costs approximate the whole text's count: recount, and drop
    // units from the end while over the limit.
    size_t count = counter.Count(text.substr(start, units[last].end - start));
    while (count > options.chunk_tokens && last > first) {
      --last;
      count = counter.Count(text.substr(start, units[last].end - start));
    }
    size_t end = units[last].end;
    while (end > start && IsAsciiSpace(text[end - 1])) --end;
    if (end > start) {
      Chunk c;
      c.start = start;
      c.end = end;
      c.page = seg.page;
      c.section = seg.section;
      c.tokens = counter.Count(text.substr(start, end - start));
      out->push_back(std::move(c));
    }
    if (last + 1 >= n) break;
    // The next chunk repeats up to overlap_tokens of this one's tail.
    size_t next = last + 1, overlap = 0;
    while (next - 1 > first && overlap + units[next - 1].cost <= options.overlap_tokens) {
      overlap += units[next - 1].cost;
      --next;
    }
    while (next < n && units[next].word == units[next].end) ++next;
    first = next;
  }
}

}  // namespace

Status ValidateChunkOptions(const ChunkOptions& o) {
  if (o.chunk_tokens < kMinChunkTokens) {
    return Status::InvalidArgument("ingest.chunk_tokens must be at least " + std::to_string(kMinChunkTokens) +
                                   ", got " + std::to_string(o.chunk_tokens));
  }
  if (o.overlap_tokens * 2 >= o.chunk_tokens) {
    return Status::InvalidArgument("ingest.overlap_tokens (" + std::to_string(o.overlap_tokens) +
                                   ") must be less than half of ingest.chunk_tokens (" +
                                   std::to_string(o.chunk_tokens) + ")");
  }
  if (o.max_chunk_bytes < kMinChunkBytes) {
    return Status::InvalidArgument("a chunk may hold at least " + std::to_string(kMinChunkBytes) +
                                   " bytes (policy.max_text_bytes), got " + std::to_string(o.max_chunk_bytes));
  }
  return Status::Ok();
}

std::vector<Chunk> ChunkDocument(const ExtractedDocument& doc, const TokenCounter& counter,
                                 const ChunkOptions& options) {
  std::vector<Chunk> out;
  for (const DocSegment& seg : doc.segments) ChunkSegment(doc, seg, counter, options, &out);
  return out;
}

}  // namespace msp
