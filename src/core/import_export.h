// JSONL import and export: one record a line, in the codec's JSON form
// (docs/cli.md). Export writes what import reads back unchanged; vectors are
// not exported (they are derived) and are recomputed on import.
#ifndef MSP_CORE_IMPORT_EXPORT_H_
#define MSP_CORE_IMPORT_EXPORT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "embed/embedder.h"
#include "msp/options.h"
#include "msp/status.h"
#include "msp/types.h"
#include "store/store.h"

namespace msp {

// Fills each record's embedding and embedder_id, embedding in batches.
Status EmbedRecords(Embedder& embedder, std::vector<Memory>* records);

// Reads every line first; any bad line fails the whole import with an
// InvalidArgument naming the line, and nothing is stored. Records keep their
// ids (an existing id is replaced); a missing id gets a new one. Import is a
// restore: the write policy's worth-storing rules do not apply, but every
// structural check does. All records land in one atomic batch, each with an
// import audit event.
Result<ImportReport> ImportJsonl(std::istream& in, Store& store, Embedder& embedder,
                                 const Options& options, TimeMs now, const std::string& actor);

// Every record visible to `scope` (all kinds and states, expired included), in
// id order. Returns the number of lines written.
Result<int64_t> ExportJsonl(Store& store, const Namespace& scope, std::ostream& out);

}  // namespace msp

#endif  // MSP_CORE_IMPORT_EXPORT_H_
