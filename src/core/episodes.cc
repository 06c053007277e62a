// Episodes: a session's steps.
#include "core/episodes.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/idempotency.h"
#include "core/write_policy.h"

namespace msp {
namespace {

using json = nlohmann::json;

// The text an episode is indexed and shown by: the explicit text, else the
// content's "text" string, else every string in the content joined.
std::string EpisodeText(const EpisodeStep& step, const json& content) {
  if (!step.text.empty()) return step.text;
  if (content.is_object() && content.contains("text") && content["text"].is_string()) {
    return content["text"].get<std::string>();
  }
  std::string out;
  std::vector<const json*> stack{&content};
  while (!stack.empty()) {
    const json* j = stack.back();
    stack.pop_back();
    if (j->is_string()) {
      if (!out.empty()) out += ' ';
      out += j->get<std::string>();
    } else if (j->is_structured()) {
      std::vector<const json*> kids;
      for (const auto& kid : *j) kids.push_back(&kid);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
    }
  }
  return out;
}

}  // namespace

Result<Memory> Episodes::Add(const EpisodeStep& step) {
  if (step.ns.session.empty()) return Status::InvalidArgument("session is required for an episode");
  json content = json::object();
  if (!step.content_json.empty()) {
    content = json::parse(step.content_json, nullptr, false);
    if (content.is_discarded()) return Status::InvalidArgument("content is not valid JSON");
    if (!content.is_object()) return Status::InvalidArgument("content must be a JSON object");
  }
  const std::string text = EpisodeText(step, content);
  MSP_RETURN_IF_ERROR(ValidateText("text", text, ctx_.options.policy.max_record_bytes, "policy.max_record_bytes"));
  MSP_RETURN_IF_ERROR(ValidateCommon(step.ns, step.tags, step.source, 1.0, "", {}));
  if (step.step_number < 0) return Status::InvalidArgument("step_number must be >= 0");
  if (step.duration_ms < 0 || step.token_count < 0) {
    return Status::InvalidArgument("duration_ms and token_count must be >= 0");
  }
  if (!step.tool_name.empty()) {
    MSP_RETURN_IF_ERROR(ValidateCommon(step.ns, {step.tool_name}, "", 1.0, "", {})
                            .WithContext("tool_name"));
  }
  const TimeMs now = ctx_.clock.NowMs();
  const std::string actor = ctx_.ActorOf(step.actor);
  if (Status s = CheckStructural(step.sensitivity, ctx_.options.policy); !s.ok()) {
    return ctx_.RefuseAndAudit(s, step.ns.tenant, actor, now, text);
  }
  std::string hash;  // of a step with a request id
  if (!step.request_id.empty()) {
    MSP_RETURN_IF_ERROR(ValidateRequestId(step.request_id));
    hash = EpisodeStepHash(step);
    MSP_ASSIGN_OR_RETURN(std::optional<Memory> first, RepeatOf(step, hash, now));
    if (first) return std::move(*first);
  }
  if (content.empty() && !step.text.empty()) content["text"] = step.text;
  Memory m = NewRecord(step.ns, Kind::kEpisode, Layer::kEpisodic, text, now);
  if (step.timestamp > 0) m.created_at = m.updated_at = step.timestamp;
  json metadata = json::object();
  if (!step.tool_name.empty()) metadata["tool_name"] = step.tool_name;
  if (step.duration_ms > 0) metadata["duration_ms"] = step.duration_ms;
  if (step.token_count > 0) metadata["token_count"] = step.token_count;
  m.body_json = json{{"type", std::string(EpisodeTypeName(step.type))},
                     {"content", content},
                     {"metadata", metadata}}
                    .dump();
  m.tags = step.tags;
  m.source = step.source;
  m.sensitivity = step.sensitivity;
  MSP_RETURN_IF_ERROR(ctx_.Embed(&m));
  {
    std::lock_guard<std::mutex> lock(ctx_.write_mu);
    if (!hash.empty()) {  // a repeat that raced this one in this process
      MSP_ASSIGN_OR_RETURN(std::optional<Memory> first, RepeatOf(step, hash, now));
      if (first) return std::move(*first);
    }
    // The store keeps a session's steps unique; another process may take
    // the next step between our read and our write, so an automatic step
    // number is retried, an explicit one is the caller's to fix.
    constexpr int kAttempts = 50;
    for (int attempt = 1;; ++attempt) {
      if (step.step_number == 0) {
        MSP_ASSIGN_OR_RETURN(int64_t last_step, LastStepNumber(step.ns, step.ns.session));
        m.step_number = last_step + 1;
      } else {
        m.step_number = step.step_number;
      }
      WriteBatch batch;
      batch.audit.push_back(MakeAudit(now, actor, AuditAction::kWrite, m.id, m.ns.tenant, "episode"));
      batch.puts.push_back(m);
      if (!hash.empty()) {
        IdempotencyKey key;
        key.tenant = step.ns.tenant;
        key.key = step.request_id;
        key.request_hash = hash;
        key.reply = WriteReplyJson(WriteResult{m.id, false, {}});
        key.created_at = now;
        key.expires_at = now + static_cast<TimeMs>(ctx_.options.store.idempotency_ttl_hours) * 3600 * 1000;
        batch.idempotency = std::move(key);
      }
      auto seqs = ctx_.ApplyBatchSeqs(batch);
      if (seqs.ok()) {
        m.seq = seqs->empty() ? 0 : seqs->front();
        break;
      }
      if (seqs.status().code() != StatusCode::kAlreadyExists) return seqs.status();
      if (!hash.empty()) {  // another process claimed the key first
        MSP_ASSIGN_OR_RETURN(std::optional<Memory> first, RepeatOf(step, hash, now));
        if (first) return std::move(*first);
      }
      if (step.step_number != 0) {
        return Status::AlreadyExists("session '" + step.ns.session + "' already has step " +
                                     std::to_string(step.step_number));
      }
      if (attempt == kAttempts) {
        return Status::Unavailable("session '" + step.ns.session + "': no free step number after " +
                                   std::to_string(kAttempts) + " attempts under concurrent writers");
      }
    }
  }
  MSP_RETURN_IF_ERROR(consolidator_.AfterEpisode(m, actor));
  return m;
}

Result<std::optional<Memory>> Episodes::RepeatOf(const EpisodeStep& step, const std::string& hash, TimeMs now) {
  MSP_ASSIGN_OR_RETURN(std::optional<IdempotencyKey> held,
                       ctx_.store.GetIdempotencyKey(step.ns.tenant, step.request_id, now));
  if (!held) return std::optional<Memory>();
  MSP_ASSIGN_OR_RETURN(WriteResult first, AnswerRepeat(*held, hash));
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> record, ctx_.store.Get(first.id));
  if (!record) {
    return Status::AlreadyExists("request_id '" + step.request_id + "' already added episode " + first.id +
                                 ", since deleted; nothing was written");
  }
  return record;
}

Result<std::vector<Memory>> Episodes::LastSteps(const Namespace& scope, const std::string& session, int k) {
  if (session.empty()) return Status::InvalidArgument("session is required");
  if (k < 0) return Status::InvalidArgument("k must be >= 0");
  RecordQuery q;
  q.scope = scope;
  q.kinds = {Kind::kEpisode};
  q.session = session;
  q.order = RecordQuery::Order::kStepDesc;
  q.limit = k;
  q.not_expired_at = ctx_.clock.NowMs();
  q.with_embeddings = false;
  MSP_ASSIGN_OR_RETURN(auto steps, ctx_.store.List(q));
  std::reverse(steps.begin(), steps.end());
  return steps;
}

Result<int64_t> Episodes::LastStepNumber(const Namespace& ns, const std::string& session) {
  RecordQuery q;
  q.scope = ns;
  q.kinds = {Kind::kEpisode};
  q.session = session;
  q.order = RecordQuery::Order::kStepDesc;
  q.limit = 1;
  q.with_embeddings = false;
  MSP_ASSIGN_OR_RETURN(auto last, ctx_.store.List(q));
  return last.empty() ? int64_t{0} : last.front().step_number;
}

}  // namespace msp
