// RecordReader: the engine's plain reads — one record by id, a filtered
// list, a fact's supersession history, the records changed since a point
// of the change sequence, and the audit trail. Each read returns records
// as the store holds them now (no index is involved) and flushes the
// access log first where it returns access counts.
//
// Thread-safety: every method is safe from several threads.
#ifndef MSP_CORE_RECORD_READER_H_
#define MSP_CORE_RECORD_READER_H_

#include <string>
#include <vector>

#include "core/engine_context.h"

namespace msp {

class RecordReader {
 public:
  // `ctx` must outlive this object.
  explicit RecordReader(const EngineContext& ctx) : ctx_(ctx) {}

  // The MemoryLayer calls of the same names.
  Result<Memory> Get(const Namespace& scope, const std::string& id);
  Result<std::vector<Memory>> List(const ListRequest& r);
  Result<std::vector<Memory>> History(const Namespace& scope, const std::string& id);
  Result<RecordChanges> ChangesSince(const Namespace& scope, int64_t after, int limit);
  Result<std::vector<AuditEvent>> Audit(const Namespace& scope, const std::string& record_id, int limit);

 private:
  const EngineContext& ctx_;
};

}  // namespace msp

#endif  // MSP_CORE_RECORD_READER_H_
