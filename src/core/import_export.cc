// JSONL import and export.
#include "core/import_export.h"

#include <algorithm>
#include <istream>
#include <map>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "core/write_policy.h"
#include "util/passages.h"
#include "util/uuid.h"

namespace msp {

Status EmbedRecords(Embedder& embedder, std::vector<Memory>* records) {
  constexpr size_t kBatch = 256;
  for (size_t i = 0; i < records->size(); i += kBatch) {
    const size_t end = std::min(records->size(), i + kBatch);
    std::vector<std::string> texts;
    for (size_t j = i; j < end; ++j) texts.push_back((*records)[j].text);
    MSP_ASSIGN_OR_RETURN(auto vecs, embedder.Embed(texts));
    for (size_t j = i; j < end; ++j) {
      (*records)[j].embedding = std::move(vecs[j - i]);
      (*records)[j].embedder_id = embedder.id();
    }
  }
  return Status::Ok();
}

Result<ImportReport> ImportJsonl(std::istream& in, Store& store, Embedder& embedder,
                                 const Options& options, TimeMs now, const std::string& actor) {
  const std::string& oversize = options.policy.on_oversize;
  if (oversize != "refuse" && oversize != "split" && oversize != "truncate") {
    return Status::InvalidArgument("policy.on_oversize (--on-oversize) must be refuse, split or truncate, got '" +
                                   oversize + "'");
  }
  ImportReport report;
  WriteBatch batch;
  std::set<std::string> ids;
  std::vector<int> line_of;  // the line of each put, for messages
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    ++report.lines;
    auto fail = [&](const Status& s) {
      return Status(s.code() == StatusCode::kOk ? StatusCode::kInvalidArgument : s.code(),
                    "line " + std::to_string(line_no) + ": " + s.message() + " (nothing was imported)");
    };
    auto obj = ParseJsonObject(line, "record");
    if (!obj.ok()) return fail(obj.status());
    auto rec = MemoryFromJson(*obj);
    if (!rec.ok()) return fail(rec.status());
    Memory m = std::move(rec).value();
    if (m.id.empty()) m.id = NewUuid(now);
    if (!IsUuid(m.id)) return fail(Status::InvalidArgument("id '" + m.id + "' is not a UUID"));
    if (!ids.insert(m.id).second) return fail(Status::InvalidArgument("id " + m.id + " appears twice"));
    if (Status s = ValidateText("text", m.text, 0); !s.ok()) return fail(s);
    if (Status s = ValidateCommon(m.ns, m.tags, m.source, m.confidence, m.body_json, m.provenance); !s.ok()) {
      return fail(s);
    }
    if (Status s = CheckStructural(m.sensitivity, options.policy); !s.ok()) return fail(s);
    if (m.kind == Kind::kEpisode && m.ns.session.empty()) {
      return fail(Status::InvalidArgument("namespace.session is required for an episode"));
    }
    if (m.created_at == 0) m.created_at = now;
    if (m.updated_at == 0) m.updated_at = m.created_at;
    m.seq = 0;
    std::vector<Memory> parts;
    const size_t max_bytes = options.policy.max_record_bytes;
    if (max_bytes > 0 && m.text.size() > max_bytes) {
      if (options.policy.on_oversize == "truncate") {
        m.text.resize(Utf8Prefix(m.text, max_bytes));
        ++report.truncated;
      } else if (options.policy.on_oversize == "split") {
        // The first part keeps the id; each other part is a new record
        // naming the first (an episode's other parts take no step: a
        // session's steps are unique).
        const std::vector<TextSpan> spans = SplitPassages(m.text, max_bytes);
        for (size_t k = 1; k < spans.size(); ++k) {
          Memory part = m;
          part.id = NewUuid(now);
          ids.insert(part.id);
          part.text = m.text.substr(spans[k].begin, spans[k].end - spans[k].begin);
          if (part.kind == Kind::kEpisode) part.step_number = 0;
          part.provenance.push_back(ProvenanceRef{"split_from", m.id,
                                                  "part " + std::to_string(k + 1) + " of " +
                                                      std::to_string(spans.size()) + ", bytes " +
                                                      std::to_string(spans[k].begin) + ".." +
                                                      std::to_string(spans[k].end)});
          parts.push_back(std::move(part));
        }
        m.text.resize(spans.front().end);
        ++report.split;
      } else {
        return fail(Status::InvalidArgument(
            "text is " + std::to_string(m.text.size()) + " bytes, over policy.max_record_bytes (" +
            std::to_string(max_bytes) + "); import with --on-oversize split (several records) or --on-oversize "
            "truncate (policy.on_oversize), or raise policy.max_record_bytes"));
      }
    }
    parts.insert(parts.begin(), std::move(m));
    for (Memory& p : parts) {
      if (Status s = ValidateText("text", p.text, 0); !s.ok()) return fail(s);
      AuditEvent e;
      e.at = now;
      e.actor = actor;
      e.action = AuditAction::kImport;
      e.record_id = p.id;
      e.tenant = p.ns.tenant;
      e.reason = "import line " + std::to_string(line_no);
      batch.audit.push_back(std::move(e));
      batch.puts.push_back(std::move(p));
      line_of.push_back(line_no);
    }
  }
  if (in.bad()) return Status::IoError("reading the import stream failed; nothing was imported");
  // An existing id may only be replaced within its own tenant. A line whose
  // id is another tenant's record is imported as a new record under a fresh
  // id, exactly as a line with an unknown id is imported under its own: the
  // answer is the same for both, so an import cannot tell whether an id
  // exists in another tenant (docs/cli.md, import). The check is made atomic
  // with the write by compare-and-swap conditions: each id must still be at
  // the seq read here (or still absent).
  std::vector<std::string> line_ids;
  for (const Memory& m : batch.puts) line_ids.push_back(m.id);
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> existing, store.GetMany(line_ids, /*with_embeddings=*/false));
  std::map<std::string, const Memory*> existing_by_id;
  for (const Memory& e : existing) existing_by_id[e.id] = &e;
  for (size_t i = 0; i < batch.puts.size(); ++i) {
    Memory& m = batch.puts[i];
    auto it = existing_by_id.find(m.id);
    if (it != existing_by_id.end() && it->second->ns.tenant != m.ns.tenant) {
      m.id = NewUuid(now);
      while (ids.count(m.id) != 0) m.id = NewUuid(now);
      ids.insert(m.id);
      batch.audit[i].record_id = m.id;
      batch.expect_seq.emplace_back(m.id, 0);
      continue;
    }
    batch.expect_seq.emplace_back(m.id, it == existing_by_id.end() ? 0 : it->second->seq);
  }
  // Vectors are derived: recompute them.
  MSP_RETURN_IF_ERROR(EmbedRecords(embedder, &batch.puts));
  if (!batch.puts.empty()) {
    MSP_ASSIGN_OR_RETURN(auto seqs, store.Apply(batch));
    (void)seqs;
  }
  report.applied = static_cast<int>(batch.puts.size());
  return report;
}

Result<int64_t> ExportJsonl(Store& store, const Namespace& scope, std::ostream& out) {
  int64_t n = 0;
  MSP_RETURN_IF_ERROR(store.Scan([&](const Memory& m) {
    if (!scope.Contains(m.ns)) return true;
    out << MemoryToJson(m, /*with_embedding=*/false).dump() << '\n';
    ++n;
    return static_cast<bool>(out);
  }));
  if (!out) return Status::IoError("writing the export failed after " + std::to_string(n) + " records");
  return n;
}

}  // namespace msp
