// The records table's row, shared by the SQLite and PostgreSQL stores: the
// columns in select order, the ORDER BY of a query, the checks of a query
// and of a put, the encodings of a put, and a record's values written to and
// read back from a backend's statement. Each backend adapts its own statement
// or result to RowWriter / RowReader.
#ifndef MSP_STORE_RECORD_ROW_H_
#define MSP_STORE_RECORD_ROW_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "msp/status.h"
#include "msp/types.h"
#include "store/store.h"

namespace msp::record_row {

// The records columns in select order; the embedding is always last.
enum Col : int {
  kId, kTenant, kUser, kAgent, kSession, kMission, kOperator, kLayer, kKind, kText,
  kBody, kTags, kSource, kSensitivity, kCriticality, kConfidence, kCreatedAt, kUpdatedAt,
  kExpiresAt, kValidAt, kInvalidAt, kAccessCount, kLastAccessed, kProvenance, kState,
  kSupersedes, kSupersededBy, kStepNumber, kEmbedderId, kSeq, kAccessLevel, kEmbedding,
  kColumnCount
};

// Column names as SQL identifiers ("text" quoted: both dialects accept it).
extern const std::array<std::string_view, kColumnCount> kColumns;

// "id, tenant, ..., embedding"; with `no_embedding`, that SQL expression in
// the embedding's place (e.g. "NULL").
std::string SelectList(std::string_view no_embedding = {});

// " ORDER BY ..." for a query's order (ties broken by id, so pages are stable).
std::string_view OrderBy(RecordQuery::Order order);

// The checks every backend makes on a query: InvalidArgument naming `op`
// when the limit or the offset is negative.
Status ValidateQuery(const RecordQuery& q, std::string_view op);

// The checks every backend makes on a put: an id and a tenant, an access
// level in 0..kMaxAccessLevel, a finite confidence.
Status ValidatePut(const Memory& m);

// The JSON columns of a put, encoded before a write transaction starts.
struct EncodedPut {
  std::string tags_json;
  std::string provenance_json;
};
// InvalidArgument when a tag or a provenance entry is not valid UTF-8.
Result<EncodedPut> EncodePut(const Memory& m);

// Receives a record's values in column order (kId first).
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void Text(int col, std::string_view value) = 0;
  virtual void Int(int col, int64_t value) = 0;
  virtual void Double(int col, double value) = 0;
  virtual void Blob(int col, const void* data, size_t size) = 0;
  virtual void Null(int col) = 0;
};
// Writes every column of `m` (the embedding as little-endian float32 bytes,
// NULL when empty) with `seq` as its change number.
void WriteRow(const Memory& m, const EncodedPut& enc, int64_t seq, RowWriter& out);

// One row of a SelectList() query.
class RowReader {
 public:
  virtual ~RowReader() = default;
  virtual std::string_view Text(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  // The bytes of a binary column; false when the backend cannot decode them.
  virtual bool Blob(int col, std::string_view* out) const = 0;
};
// Reads a row into *m. A value msp cannot have written (an unknown enum
// name, malformed JSON, an embedding that is not whole floats) is Corruption
// naming `backend` ("sqlite"), the record and `where` (a path or a server).
Status ReadRow(const RowReader& row, std::string_view backend, const std::string& where, Memory* m);

}  // namespace msp::record_row

#endif  // MSP_STORE_RECORD_ROW_H_
