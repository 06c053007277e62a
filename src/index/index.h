// The derived indexes: a lexical index (lexical/, Xapian BM25) and a vector
// index (vector/, exact scan). Both are rebuilt from the store at will and
// are stamped with the last change-sequence number they reflect.
#ifndef MSP_INDEX_INDEX_H_
#define MSP_INDEX_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"

namespace msp {

// What a query may see: the namespace scope, the filter, and "now" (records
// with 0 < expires_at <= now are never returned).
struct IndexQuery {
  Namespace scope;
  SearchFilter filter;
  TimeMs now = 0;
  std::string text;   // lexical only
  int limit = 10;
};

struct IndexHit {
  std::string id;
  double score = 0.0;  // BM25 weight or cosine
};

// The one definition of "record r is visible to query q" (scope, filter,
// expiry, state). The lexical index encodes the same rules as boolean terms;
// tests check that the two agree.
bool MatchesQuery(const Memory& r, const IndexQuery& q);

// Thread-safety: safe from several threads; several processes may share one
// index directory (writes take Xapian's lock, waiting for other writers).
class LexicalIndex {
 public:
  virtual ~LexicalIndex() = default;
  // The change sequence the index reflects (0 when empty or new).
  virtual Result<int64_t> AppliedSeq() = 0;
  // Brings the index to `up_to_seq`: (re)indexes `upserts`, removes
  // `deletes` (missing ids are ignored). A no-op when the index already
  // reflects up_to_seq or later. Atomic.
  virtual Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
                       int64_t up_to_seq) = 0;
  // Empties the index and resets AppliedSeq to 0.
  virtual Status Clear() = 0;
  // BM25 top `q.limit` over q.text, best first, only records matching q.
  virtual Result<std::vector<IndexHit>> Search(const IndexQuery& q) = 0;
  virtual Result<int64_t> DocCount() = 0;
};

// Opens or creates the Xapian index in `dir`.
Result<std::unique_ptr<LexicalIndex>> OpenLexicalIndex(const std::string& dir,
                                                       const RetrievalOptions& options);

// Exact cosine scan over L2-normalised vectors, held in memory.
// Thread-safety: safe from several threads (readers share, Apply excludes).
class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  virtual int dimension() const = 0;
  virtual int64_t AppliedSeq() const = 0;
  // As LexicalIndex::Apply. Records without an embedding of this dimension
  // are dropped from the index.
  virtual Status Apply(const std::vector<Memory>& upserts, const std::vector<std::string>& deletes,
                       int64_t up_to_seq) = 0;
  virtual void Clear() = 0;
  // Top `q.limit` by cosine with `query` (dimension() floats), best first.
  virtual Result<std::vector<IndexHit>> Search(const std::vector<float>& query,
                                               const IndexQuery& q) const = 0;
  virtual size_t size() const = 0;
};

std::unique_ptr<VectorIndex> MakeExactVectorIndex(int dimension);

}  // namespace msp

#endif  // MSP_INDEX_INDEX_H_
