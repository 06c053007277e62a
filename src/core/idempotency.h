// Idempotency keys of writes (--request-id, Idempotency-Key, request_id): a
// repeat of a write with the same key in the same tenant answers the first
// result and writes nothing; the same key with another request is a
// Conflict. The key is stored with the write, in its transaction
// (WriteBatch::idempotency), and kept store.idempotency_ttl_hours.
#ifndef MSP_CORE_IDEMPOTENCY_H_
#define MSP_CORE_IDEMPOTENCY_H_

#include <string>

#include "msp/status.h"
#include "msp/types.h"
#include "store/store.h"

namespace msp {

// InvalidArgument unless `request_id` is 1..200 printable ASCII characters.
Status ValidateRequestId(const std::string& request_id);

// A hash of everything the request asks for (not its actor or request id):
// equal for a repeat, different for another request.
std::string WriteRequestHash(const WriteRequest& r);

// The same for an episode step (not its actor, request id or step number
// when automatic).
std::string EpisodeStepHash(const EpisodeStep& s);

// The reply a key keeps, and back.
std::string WriteReplyJson(const WriteResult& result);
Result<WriteResult> WriteReplyFromJson(const std::string& reply);

// The answer to a write whose key is already held: the first result when
// `held` was made by the same request (`hash`), else Conflict naming the key.
Result<WriteResult> AnswerRepeat(const IdempotencyKey& held, const std::string& hash);

}  // namespace msp

#endif  // MSP_CORE_IDEMPOTENCY_H_
