// Core memory blocks (seed 000, section 4.6, as in Letta): named blocks of
// bounded size — persona, user, task — that are always in the agent's
// working memory and that the agent edits itself through tools
// (core_memory_append, core_memory_replace).
//
// An edit that would take a block past its limit is refused with the limit
// in the message; nothing is ever truncated. Limits count characters (UTF-8
// code points).
//
// Storage: one record per block, written with MemoryLayer::Commit:
// Kind::kArtifact, Layer::kSemantic, namespace {tenant, user, agent} of the
// scope, a deterministic id (tenant, user, agent, label), EMPTY text (a block
// never matches a search: it is always in view anyway), tags "core_memory"
// and "core_memory:<label>", body {"type": "core_block", "label", "value",
// "limit", "description"}. Every edit is a compare-and-swap on the record's
// seq; a lost race re-reads and re-applies the edit, so concurrent edits
// (threads or processes) are never lost. Every edit is in the audit log.
//
// Thread-safe (holds no state besides the engine and the scope).
#ifndef MSP_AGENT_CORE_MEMORY_H_
#define MSP_AGENT_CORE_MEMORY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "msp/memory.h"
#include "msp/status.h"

namespace msp {

struct CoreBlock {
  std::string label;        // [a-z0-9_-], 1..64
  std::string value;
  size_t limit = 0;         // characters
  std::string description;  // what the block is for (shown to people)
  std::string id;           // the record; empty for a default block never written
  int64_t seq = 0;
  TimeMs updated_at = 0;
};

// The blocks every agent has: persona, user, task.
const std::vector<std::string>& DefaultCoreBlockLabels();

class CoreMemory {
 public:
  // `scope`: tenant, user and agent whose blocks these are.
  // `default_limit`: the limit of a block created without one.
  CoreMemory(MemoryLayer& engine, Namespace scope, size_t default_limit);

  // The default blocks (empty until written) and any others, defaults first
  // in their order, then the rest by label.
  Result<std::vector<CoreBlock>> Blocks() const;
  // NotFound for a label that is neither a default nor written.
  Result<CoreBlock> Get(const std::string& label) const;

  // Sets a block's whole value (creating it); `limit` nullopt keeps the
  // block's limit (or the default). Refused (InvalidArgument naming the
  // limit) when the value is longer than the limit.
  Result<CoreBlock> Set(const std::string& label, const std::string& value, std::optional<size_t> limit,
                        const std::string& actor);
  // Appends `text` on a new line. Refused past the limit.
  Result<CoreBlock> Append(const std::string& label, const std::string& text, const std::string& actor);
  // Replaces every occurrence of `old_text` (non-empty, must occur) with
  // `new_text` (may be empty: a deletion). Refused past the limit.
  Result<CoreBlock> Replace(const std::string& label, const std::string& old_text, const std::string& new_text,
                            const std::string& actor);

 private:
  template <typename Edit>
  Result<CoreBlock> Modify(const std::string& label, std::optional<size_t> limit, const std::string& actor,
                           const std::string& reason, Edit edit);

  MemoryLayer& engine_;
  Namespace scope_;
  size_t default_limit_;
};

// Characters (code points) of UTF-8 text.
size_t Utf8Length(const std::string& s);

}  // namespace msp

#endif  // MSP_AGENT_CORE_MEMORY_H_
