// Internal to index/lexical/: Xapian's exceptions as the lexical index's
// Status (damage the index repairs by a rebuild, a full disk, a writer's
// lock, other I/O failures), and the change sequence in its metadata.
#ifndef MSP_INDEX_LEXICAL_XAPIAN_STATUS_H_
#define MSP_INDEX_LEXICAL_XAPIAN_STATUS_H_

#include <cstdint>
#include <string>

#include <xapian.h>

#include "msp/status.h"

namespace msp::xapian_lexical {

// True when `e` says the index's files are damaged or gone (a truncated or
// garbled table, a junk revision file, a deleted folder, a file where the
// folder should be): what a rebuild from the store repairs. A failure of
// the system (a full disk, permissions, an I/O error) is not damage.
bool IsDamage(const Xapian::Error& e);

// Damage is Corruption (LexicalIndex::Reset repairs it), a full disk
// DiskFull, a writer's lock Unavailable, anything else IoError.
Status FromXapian(const std::string& dir, const char* op, const Xapian::Error& e);

// The "last_seq" metadata `s` of the index in `dir` (0 when empty);
// Corruption when it is not a change sequence.
Result<int64_t> ParseSeq(const std::string& dir, const std::string& s);

}  // namespace msp::xapian_lexical

#endif  // MSP_INDEX_LEXICAL_XAPIAN_STATUS_H_
