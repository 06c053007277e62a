// Core memory blocks stored as records, edited with compare-and-swap.
#include "agent/core_memory.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "util/utf8.h"
#include "util/uuid.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr int kAttempts = 20;
constexpr size_t kMaxLimit = 100000;

bool IsLabel(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

Status CheckLabel(const std::string& label) {
  if (!IsLabel(label)) {
    return Status::InvalidArgument("core memory block label '" + label.substr(0, 80) +
                                   "' must be 1..64 characters of a-z 0-9 _ -");
  }
  return Status::Ok();
}

std::string BlockRecordId(const Namespace& ns, const std::string& label) {
  const std::string key = "msp-core-block\x1f" + ns.tenant + "\x1f" + ns.user + "\x1f" + ns.agent + "\x1f" + label;
  return NameUuid(key);
}

std::string DefaultDescription(const std::string& label) {
  if (label == "persona") return "who the agent is and how it behaves";
  if (label == "user") return "what the agent knows about the user";
  if (label == "task") return "the task at hand and where it stands";
  return "";
}

bool IsDefault(const std::string& label) {
  const auto& d = DefaultCoreBlockLabels();
  return std::find(d.begin(), d.end(), label) != d.end();
}

Result<CoreBlock> BlockFromMemory(const Memory& m) {
  const json body = json::parse(m.body_json, nullptr, false);
  if (body.is_discarded() || !body.is_object() || body.value("type", "") != "core_block") {
    return Status::Corruption("record " + m.id + " is not a core memory block");
  }
  CoreBlock b;
  b.label = body.value("label", "");
  b.value = body.value("value", "");
  b.limit = body.value("limit", static_cast<size_t>(0));
  b.description = body.value("description", "");
  b.id = m.id;
  b.seq = m.seq;
  b.updated_at = m.updated_at;
  return b;
}

// Finds text in `haystack` that is not a whole UTF-8 character sequence
// boundary-safe: both are valid UTF-8, so a byte match is a character match.
size_t CountOccurrences(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

const std::vector<std::string>& DefaultCoreBlockLabels() {
  static const std::vector<std::string> labels = {"persona", "user", "task"};
  return labels;
}

CoreMemory::CoreMemory(MemoryLayer& engine, Namespace scope, size_t default_limit)
    : engine_(engine), default_limit_(default_limit) {
  scope_.tenant = scope.tenant;
  scope_.user = scope.user;
  scope_.agent = scope.agent;
}

Result<std::vector<CoreBlock>> CoreMemory::Blocks() const {
  ListRequest req;
  req.scope = scope_;
  req.filter.kinds = {Kind::kArtifact};
  req.filter.tags = {"core_memory"};
  req.include_expired = true;
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> records, engine_.List(req));
  std::vector<CoreBlock> written;
  for (const Memory& m : records) {
    if (!(m.ns == scope_)) continue;
    Result<CoreBlock> b = BlockFromMemory(m);
    if (b.ok()) written.push_back(std::move(b).value());
  }
  std::vector<CoreBlock> out;
  for (const std::string& label : DefaultCoreBlockLabels()) {
    auto it = std::find_if(written.begin(), written.end(), [&](const CoreBlock& b) { return b.label == label; });
    if (it != written.end()) {
      out.push_back(*it);
    } else {
      CoreBlock b;
      b.label = label;
      b.limit = default_limit_;
      b.description = DefaultDescription(label);
      out.push_back(std::move(b));
    }
  }
  std::vector<CoreBlock> others;
  for (const CoreBlock& b : written) {
    if (!IsDefault(b.label)) others.push_back(b);
  }
  std::sort(others.begin(), others.end(), [](const CoreBlock& a, const CoreBlock& b) { return a.label < b.label; });
  out.insert(out.end(), others.begin(), others.end());
  return out;
}

Result<CoreBlock> CoreMemory::Get(const std::string& label) const {
  MSP_RETURN_IF_ERROR(CheckLabel(label));
  Result<Memory> m = engine_.Get(scope_, BlockRecordId(scope_, label));
  if (m.ok()) return BlockFromMemory(*m);
  if (!m.status().IsNotFound()) return m.status();
  if (!IsDefault(label)) {
    return Status::NotFound("no core memory block '" + label + "' (blocks: persona, user, task and those set with "
                            "`msp core set`)");
  }
  CoreBlock b;
  b.label = label;
  b.limit = default_limit_;
  b.description = DefaultDescription(label);
  return b;
}

template <typename Edit>
Result<CoreBlock> CoreMemory::Modify(const std::string& label, std::optional<size_t> limit, const std::string& actor,
                                     const std::string& reason, Edit edit) {
  MSP_RETURN_IF_ERROR(CheckLabel(label));
  if (limit && (*limit == 0 || *limit > kMaxLimit)) {
    return Status::InvalidArgument("core memory block limit must be 1.." + std::to_string(kMaxLimit) +
                                   " characters, got " + std::to_string(*limit));
  }
  for (int attempt = 1;; ++attempt) {
    Result<Memory> old = engine_.Get(scope_, BlockRecordId(scope_, label));
    if (!old.ok() && !old.status().IsNotFound()) return old.status();
    CoreBlock block;
    if (old.ok()) {
      MSP_ASSIGN_OR_RETURN(block, BlockFromMemory(*old));
    } else {
      if (!IsDefault(label) && !limit) {
        // A new block that is not a default needs Set (edits of unknown
        // blocks by the agent are refused rather than creating them).
        return Status::NotFound("no core memory block '" + label + "'; blocks are persona, user, task and those "
                                "set with `msp core set`");
      }
      block.label = label;
      block.limit = default_limit_;
      block.description = DefaultDescription(label);
    }
    if (limit) block.limit = *limit;
    MSP_ASSIGN_OR_RETURN(std::string value, edit(block.value));
    size_t bad = 0;
    if (!IsValidUtf8(value, &bad)) return Status::InvalidArgument("the text is not valid UTF-8");
    const size_t chars = Utf8Length(value);
    if (chars > block.limit) {
      return Status::InvalidArgument("core memory block '" + label + "' would hold " + std::to_string(chars) +
                                     " characters, over its limit of " + std::to_string(block.limit) +
                                     " (it holds " + std::to_string(Utf8Length(block.value)) +
                                     " now); nothing was changed: shorten it with core_memory_replace first");
    }
    Memory m;
    if (old.ok()) m = *old;
    m.id = BlockRecordId(scope_, label);
    m.ns = scope_;
    m.kind = Kind::kArtifact;
    m.layer = Layer::kSemantic;
    m.text.clear();
    m.tags = {"core_memory", "core_memory:" + label};
    m.source = "agent";
    m.body_json = json{{"type", "core_block"},
                       {"label", label},
                       {"value", value},
                       {"limit", block.limit},
                       {"description", block.description}}
                      .dump();
    RecordBatch batch;
    batch.scope = scope_;
    batch.puts = {m};
    batch.expected_seq = {old.ok() ? old->seq : 0};
    batch.actor = actor;
    batch.reason = reason + " core memory block " + label;
    Result<std::vector<Memory>> stored = engine_.Commit(batch);
    if (stored.ok()) return BlockFromMemory(stored->at(0));
    if (stored.status().code() != StatusCode::kConflict || attempt >= kAttempts) return stored.status();
  }
}

Result<CoreBlock> CoreMemory::Set(const std::string& label, const std::string& value, std::optional<size_t> limit,
                                  const std::string& actor) {
  if (!limit && !IsDefault(label)) {
    Result<CoreBlock> existing = Get(label);
    if (!existing.ok()) limit = default_limit_;  // a new block gets the default limit
  }
  return Modify(label, limit, actor, "set", [&](const std::string&) -> Result<std::string> { return value; });
}

Result<CoreBlock> CoreMemory::Append(const std::string& label, const std::string& text, const std::string& actor) {
  if (text.empty()) return Status::InvalidArgument("core_memory_append: the text to append is empty");
  return Modify(label, std::nullopt, actor, "append", [&](const std::string& cur) -> Result<std::string> {
    return cur.empty() ? text : cur + "\n" + text;
  });
}

Result<CoreBlock> CoreMemory::Replace(const std::string& label, const std::string& old_text,
                                      const std::string& new_text, const std::string& actor) {
  if (old_text.empty()) return Status::InvalidArgument("core_memory_replace: old_content is empty");
  return Modify(label, std::nullopt, actor, "replace", [&](const std::string& cur) -> Result<std::string> {
    if (CountOccurrences(cur, old_text) == 0) {
      return Status::InvalidArgument("core_memory_replace: block '" + label + "' does not contain the text '" +
                                     old_text.substr(0, 200) + "'");
    }
    std::string out;
    size_t at = 0;
    for (size_t hit = cur.find(old_text); hit != std::string::npos; hit = cur.find(old_text, at)) {
      out.append(cur, at, hit - at);
      out += new_text;
      at = hit + old_text.size();
    }
    out.append(cur, at, std::string::npos);
    return out;
  });
}

}  // namespace msp
