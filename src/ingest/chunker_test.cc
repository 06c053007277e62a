// The chunker: token limits, overlap, segment boundaries, preferred cuts.
#include <gtest/gtest.h>

#include <string>

#include "ingest/chunker.h"
#include "tests/support/test_util.h"
#include "working/tokens.h"

namespace msp {
namespace {

ExtractedDocument OneSegment(std::string text) {
  ExtractedDocument d;
  d.text = std::move(text);
  d.segments.push_back({0, d.text.size(), 0, ""});
  return d;
}

std::string Sentences(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (!s.empty()) s += " ";
    s += "Sentence number " + std::to_string(i) + " talks about pumps.";
  }
  return s;
}

TEST(ChunkerTest, ChunksStayWithinTheLimitAndOverlap) {
  EstimateTokenCounter counter;
  const ExtractedDocument d = OneSegment(Sentences(60));
  ChunkOptions o;
  o.chunk_tokens = 64;
  o.overlap_tokens = 16;
  const std::vector<Chunk> chunks = ChunkDocument(d, counter, o);
  ASSERT_GT(chunks.size(), 4u);
  EXPECT_EQ(chunks.front().start, 0u);
  EXPECT_EQ(chunks.back().end, d.text.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    const std::string text = d.text.substr(chunks[i].start, chunks[i].end - chunks[i].start);
    EXPECT_LE(counter.Count(text), 64u) << text;
    EXPECT_EQ(chunks[i].tokens, counter.Count(text));
    EXPECT_NE(text.front(), ' ');
    EXPECT_NE(text.back(), ' ');
    if (i == 0) continue;
    // Later start, overlapping the previous chunk by at most 16 tokens, and
    // no gap.
    EXPECT_GT(chunks[i].start, chunks[i - 1].start);
    ASSERT_LT(chunks[i].start, chunks[i - 1].end) << "no overlap at chunk " << i;
    const std::string overlap = d.text.substr(chunks[i].start, chunks[i - 1].end - chunks[i].start);
    EXPECT_LE(counter.Count(overlap), 16u) << overlap;
    EXPECT_GT(counter.Count(overlap), 0u);
  }
}

TEST(ChunkerTest, WithoutOverlapChunksPartitionTheWords) {
  EstimateTokenCounter counter;
  const ExtractedDocument d = OneSegment(Sentences(40));
  ChunkOptions o;
  o.chunk_tokens = 80;
  o.overlap_tokens = 0;
  const std::vector<Chunk> chunks = ChunkDocument(d, counter, o);
  ASSERT_GT(chunks.size(), 2u);
  std::string joined;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(d.text.substr(chunks[i - 1].end, chunks[i].start - chunks[i - 1].end), " ");
      joined += " ";
    }
    joined += d.text.substr(chunks[i].start, chunks[i].end - chunks[i].start);
  }
  EXPECT_EQ(joined, d.text);
}

TEST(ChunkerTest, PrefersParagraphBreaks) {
  EstimateTokenCounter counter;
  std::string text;
  for (int p = 0; p < 8; ++p) {
    if (!text.empty()) text += "\n\n";
    text += "Paragraph " + std::to_string(p) + " says the valve opens at dawn and closes at dusk every day.";
  }
  const ExtractedDocument d = OneSegment(text);
  ChunkOptions o;
  o.chunk_tokens = 64;
  o.overlap_tokens = 0;
  const std::vector<Chunk> chunks = ChunkDocument(d, counter, o);
  ASSERT_GT(chunks.size(), 2u);
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(d.text.substr(chunks[i].end, 2), "\n\n") << "chunk " << i << " ends mid-paragraph";
    EXPECT_EQ(d.text[chunks[i].end - 1], '.');
  }
}

TEST(ChunkerTest, NeverCrossesSegments) {
  EstimateTokenCounter counter;
  ExtractedDocument d;
  d.text = Sentences(10) + "\n\n" + Sentences(3);
  const size_t split = Sentences(10).size();
  d.segments.push_back({0, split, 1, ""});
  d.segments.push_back({split + 2, d.text.size(), 2, ""});
  ChunkOptions o;
  o.chunk_tokens = 1000;
  o.overlap_tokens = 10;
  const std::vector<Chunk> chunks = ChunkDocument(d, counter, o);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].end, split);
  EXPECT_EQ(chunks[0].page, 1);
  EXPECT_EQ(chunks[1].start, split + 2);
  EXPECT_EQ(chunks[1].page, 2);
}

TEST(ChunkerTest, LongWordsAndByteLimit) {
  EstimateTokenCounter counter;
  // One 5,000-byte word with two-byte characters: cut at character
  // boundaries.
  std::string word;
  for (int i = 0; i < 2500; ++i) word += "\xC3\xA9";
  const ExtractedDocument d = OneSegment(word);
  ChunkOptions o;
  o.chunk_tokens = 4096;
  o.overlap_tokens = 0;
  o.max_chunk_bytes = 1000;
  const std::vector<Chunk> chunks = ChunkDocument(d, counter, o);
  ASSERT_GE(chunks.size(), 5u);
  size_t covered = 0;
  for (const Chunk& c : chunks) {
    EXPECT_LE(c.end - c.start, 1000u);
    EXPECT_EQ(c.start % 2, 0u) << "cut inside a character";
    EXPECT_EQ(c.start, covered);
    covered = c.end;
  }
  EXPECT_EQ(covered, word.size());
}

TEST(ChunkerTest, BlankSegmentsGiveNoChunks) {
  EstimateTokenCounter counter;
  const ExtractedDocument d = OneSegment(" \n\n \t ");
  EXPECT_TRUE(ChunkDocument(d, counter, ChunkOptions{}).empty());
}

TEST(ChunkerTest, ValidatesOptions) {
  ChunkOptions o;
  EXPECT_TRUE(ValidateChunkOptions(o).ok());
  o.chunk_tokens = 32;
  EXPECT_NE(ValidateChunkOptions(o).message().find("ingest.chunk_tokens"), std::string::npos);
  o.chunk_tokens = 128;
  o.overlap_tokens = 64;
  EXPECT_NE(ValidateChunkOptions(o).message().find("ingest.overlap_tokens"), std::string::npos);
  o.overlap_tokens = 63;
  EXPECT_TRUE(ValidateChunkOptions(o).ok());
}

}  // namespace
}  // namespace msp
