// LlmExtractor: the two chat requests (extract, decide), their schemas and
// prompts, and the factory that picks the configured extractor.
#include "consolidate/llm_extractor.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/text.h"
#include "util/time.h"

namespace msp {
namespace {

using json = nlohmann::json;

constexpr const char* kStableTags[] = {"preference", "constraint", "profile", "goal"};

constexpr const char* kExtractPrompt =
    "You maintain the long-term memory of an AI assistant. Read the conversation and extract the durable "
    "facts about the user and their situation: preferences, profile (name, job, location, languages), "
    "environment (tools, operating system, versions), goals, constraints, and ongoing problems.\n"
    "Rules:\n"
    "- Only what the user states or clearly implies about themselves; never the assistant's suggestions, "
    "tool output about other things, questions, small talk or one-off requests.\n"
    "- Never record secrets (passwords, API keys, tokens) or contact data (e-mail, phone).\n"
    "- One short third-person sentence per fact, starting with \"User\" (\"User prefers Python for data "
    "analysis.\").\n"
    "- confidence: 0..1; 1 when the user says it plainly, lower when hedged or inferred.\n"
    "- tags: from preference, profile, environment, goal, constraint, problem.\n"
    "- steps: the step numbers the fact comes from.\n"
    "- valid_from: the date (YYYY-MM-DD) from which the fact holds when the conversation says so, else \"\".\n"
    "- No durable facts: return {\"facts\": []}.";

constexpr const char* kDecidePrompt =
    "You maintain the long-term memory of an AI assistant. New facts were learned; under each are the stored "
    "facts most like it, with handles (S1, S2, ...). For every new fact decide:\n"
    "- add: it is new information (also when it is only related to a stored fact);\n"
    "- merge: it says the same as a stored fact (target: that fact's handle);\n"
    "- supersede: it contradicts or updates a stored fact, which no longer holds (target: that fact's "
    "handle; e.g. \"User lives in Berlin.\" supersedes \"User lives in Munich.\").\n"
    "Only a handle listed under that new fact may be its target; for add the target is \"\". "
    "Give one decision per new fact.";

// Case and spacing aside: the key identical facts share.
std::string FactKey(std::string_view text) {
  std::string out = CollapseAsciiSpace(AsciiLower(text));
  while (!out.empty() && (out.back() == '.' || out.back() == '!')) out.pop_back();
  return out;
}

// The episode's type and text as the transcript shows them.
std::pair<std::string, std::string> TypeAndText(const Memory& m) {
  std::string type = "episode";
  std::string text = m.text;
  json body = json::parse(m.body_json, nullptr, false);
  if (!body.is_discarded() && body.is_object()) {
    if (body.contains("type") && body["type"].is_string()) type = body["type"].get<std::string>();
    if (text.empty() && body.contains("content") && body["content"].is_object()) {
      const json& c = body["content"];
      if (c.contains("text") && c["text"].is_string()) text = c["text"].get<std::string>();
      if (text.empty()) text = c.dump();
    }
  }
  return {type, text};
}

std::string EpisodeLine(const Memory& m, size_t max_chars) {
  auto [type, text] = TypeAndText(m);
  if (text.size() > max_chars) {
    size_t cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
    text = text.substr(0, cut) + " [...]";
  }
  std::string when = m.created_at > 0 ? FormatIso8601(m.created_at).substr(0, 16) : "unknown time";
  return "[step " + std::to_string(m.step_number) + " | " + when + " | " + type + "] " + text + "\n";
}

std::string DateOf(TimeMs t) { return t > 0 ? FormatIso8601(t).substr(0, 10) : ""; }

void EnsureStableTag(std::vector<std::string>* tags) {
  for (const char* t : kStableTags) {
    if (std::find(tags->begin(), tags->end(), t) != tags->end()) return;
  }
  tags->push_back("profile");
}

// Identical facts (case and spacing aside) become one: highest confidence,
// tags and sources joined, the earliest known valid_at.
std::vector<FactCandidate> MergeIdentical(std::vector<FactCandidate> in) {
  std::vector<FactCandidate> out;
  std::map<std::string, size_t> at;
  for (auto& c : in) {
    auto [it, fresh] = at.try_emplace(FactKey(c.text), out.size());
    if (fresh) {
      out.push_back(std::move(c));
      continue;
    }
    FactCandidate& kept = out[it->second];
    kept.confidence = std::max(kept.confidence, c.confidence);
    for (auto& t : c.tags) {
      if (std::find(kept.tags.begin(), kept.tags.end(), t) == kept.tags.end()) kept.tags.push_back(t);
    }
    for (auto& e : c.source_episodes) {
      if (std::find(kept.source_episodes.begin(), kept.source_episodes.end(), e) == kept.source_episodes.end()) {
        kept.source_episodes.push_back(e);
      }
    }
    if (c.valid_at > 0 && (kept.valid_at == 0 || c.valid_at < kept.valid_at)) kept.valid_at = c.valid_at;
  }
  return out;
}

}  // namespace

const json& LlmExtractor::ExtractSchema() {
  static const json schema = json::parse(R"({
    "type": "object",
    "additionalProperties": false,
    "required": ["facts"],
    "properties": {
      "facts": {
        "type": "array",
        "items": {
          "type": "object",
          "additionalProperties": false,
          "required": ["text", "confidence", "tags", "steps", "valid_from"],
          "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 1000},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "tags": {"type": "array", "items": {"type": "string",
              "enum": ["preference", "profile", "environment", "goal", "constraint", "problem"]}},
            "steps": {"type": "array", "items": {"type": "integer"}},
            "valid_from": {"type": "string"}
          }
        }
      }
    }
  })");
  return schema;
}

const json& LlmExtractor::DecideSchema() {
  static const json schema = json::parse(R"({
    "type": "object",
    "additionalProperties": false,
    "required": ["decisions"],
    "properties": {
      "decisions": {
        "type": "array",
        "items": {
          "type": "object",
          "additionalProperties": false,
          "required": ["candidate", "action", "target"],
          "properties": {
            "candidate": {"type": "integer", "minimum": 0},
            "action": {"type": "string", "enum": ["add", "merge", "supersede"]},
            "target": {"type": "string"}
          }
        }
      }
    }
  })");
  return schema;
}

LlmExtractor::LlmExtractor(std::unique_ptr<ChatClient> chat, LlmExtractorOptions options)
    : chat_(std::move(chat)), options_(options) {}

Result<std::vector<FactCandidate>> LlmExtractor::Extract(const std::vector<Memory>& episodes) {
  class NoFacts final : public FactLookup {
   public:
    Result<std::vector<Memory>> SimilarFacts(const std::string&, int) override { return std::vector<Memory>{}; }
  } none;
  return ExtractWithFacts(episodes, none);
}

Result<std::vector<FactCandidate>> LlmExtractor::ExtractWithFacts(const std::vector<Memory>& episodes,
                                                                  FactLookup& facts) {
  std::vector<const Memory*> usable;
  for (const auto& m : episodes) {
    if (m.kind != Kind::kEpisode || m.sensitivity == Sensitivity::kHigh) continue;
    usable.push_back(&m);
  }
  std::sort(usable.begin(), usable.end(),
            [](const Memory* a, const Memory* b) { return a->step_number < b->step_number; });
  std::vector<FactCandidate> all;
  std::vector<const Memory*> chunk;
  size_t chars = 0;
  auto flush = [&]() -> Status {
    if (chunk.empty()) return Status::Ok();
    MSP_ASSIGN_OR_RETURN(auto found, ExtractChunk(chunk));
    all.insert(all.end(), found.begin(), found.end());
    chunk.clear();
    chars = 0;
    return Status::Ok();
  };
  for (const Memory* m : usable) {
    size_t n = EpisodeLine(*m, options_.max_episode_chars).size();
    if (!chunk.empty() && chars + n > options_.max_chunk_chars) MSP_RETURN_IF_ERROR(flush());
    chunk.push_back(m);
    chars += n;
  }
  MSP_RETURN_IF_ERROR(flush());
  all = MergeIdentical(std::move(all));
  if (!all.empty()) MSP_RETURN_IF_ERROR(Decide(&all, facts));
  return all;
}

Result<std::vector<FactCandidate>> LlmExtractor::ExtractChunk(const std::vector<const Memory*>& chunk) const {
  std::string transcript;
  std::map<int64_t, const Memory*> by_step;
  for (const Memory* m : chunk) {
    transcript += EpisodeLine(*m, options_.max_episode_chars);
    by_step[m->step_number] = m;
  }
  const std::string session = chunk.front()->ns.session;
  std::vector<ChatMessage> messages = {
      ChatMessage::System(kExtractPrompt),
      ChatMessage::User("Conversation" + (session.empty() ? std::string() : " (session " + session + ")") +
                        ":\n" + transcript)};
  JsonReplySpec spec{"facts", ExtractSchema(), [](const json& reply) {
                       const json& facts = reply["facts"];
                       for (size_t i = 0; i < facts.size(); ++i) {
                         const std::string v = facts[i]["valid_from"].get<std::string>();
                         if (!v.empty() && !ParseIso8601(v).ok()) {
                           return Status::InvalidArgument("$.facts[" + std::to_string(i) + "].valid_from: '" + v +
                                                          "' is not a date (YYYY-MM-DD) or \"\"");
                         }
                         if (TrimAsciiSpace(facts[i]["text"].get<std::string>()).empty()) {
                           return Status::InvalidArgument("$.facts[" + std::to_string(i) + "].text is blank");
                         }
                       }
                       return Status::Ok();
                     }};
  MSP_ASSIGN_OR_RETURN(json reply, chat_->CompleteJson(messages, spec));
  std::vector<FactCandidate> out;
  for (const json& f : reply["facts"]) {
    FactCandidate c;
    c.text = TrimAsciiSpace(f["text"].get<std::string>());
    c.confidence = std::clamp(f["confidence"].get<double>(), 0.0, 1.0);
    for (const json& t : f["tags"]) {
      std::string tag = t.get<std::string>();
      if (std::find(c.tags.begin(), c.tags.end(), tag) == c.tags.end()) c.tags.push_back(tag);
    }
    EnsureStableTag(&c.tags);
    TimeMs latest = 0;
    for (const json& s : f["steps"]) {
      auto it = by_step.find(s.get<int64_t>());
      if (it == by_step.end()) continue;  // a step the model made up: ignored
      if (std::find(c.source_episodes.begin(), c.source_episodes.end(), it->second->id) == c.source_episodes.end()) {
        c.source_episodes.push_back(it->second->id);
      }
      latest = std::max(latest, it->second->created_at);
    }
    if (c.source_episodes.empty()) {
      // No usable step: the whole chunk is the source.
      for (const Memory* m : chunk) {
        c.source_episodes.push_back(m->id);
        latest = std::max(latest, m->created_at);
      }
    }
    const std::string valid_from = f["valid_from"].get<std::string>();
    c.valid_at = valid_from.empty() ? latest : ParseIso8601(valid_from).value();
    out.push_back(std::move(c));
  }
  return out;
}

Status LlmExtractor::Decide(std::vector<FactCandidate>* candidates, FactLookup& facts) const {
  // handle -> stored fact id, and the handles each candidate may name.
  std::vector<std::pair<std::string, std::string>> handles;
  std::vector<std::set<std::string>> allowed(candidates->size());
  std::map<std::string, std::string> handle_of_id;
  std::string listing;
  for (size_t i = 0; i < candidates->size(); ++i) {
    const FactCandidate& c = (*candidates)[i];
    MSP_ASSIGN_OR_RETURN(auto similar, facts.SimilarFacts(c.text, options_.similar_facts));
    listing += "New fact " + std::to_string(i) + ": " + c.text + "\n";
    if (similar.empty()) listing += "  (no similar stored facts)\n";
    for (const Memory& m : similar) {
      auto [it, fresh] = handle_of_id.try_emplace(m.id, "S" + std::to_string(handle_of_id.size() + 1));
      if (fresh) handles.emplace_back(it->second, m.id);
      allowed[i].insert(it->second);
      listing += "  " + it->second + ": " + m.text;
      if (m.valid_at > 0) listing += " (holds since " + DateOf(m.valid_at) + ")";
      listing += "\n";
    }
  }
  if (handles.empty()) return Status::Ok();  // nothing to compare with: all adds
  const size_t n = candidates->size();
  JsonReplySpec spec{"decisions", DecideSchema(), [&](const json& reply) {
                       const json& ds = reply["decisions"];
                       for (size_t k = 0; k < ds.size(); ++k) {
                         const std::string at = "$.decisions[" + std::to_string(k) + "]";
                         const int64_t i = ds[k]["candidate"].get<int64_t>();
                         if (i < 0 || static_cast<size_t>(i) >= n) {
                           return Status::InvalidArgument(at + ".candidate: there is no new fact " +
                                                          std::to_string(i) + " (0.." + std::to_string(n - 1) + ")");
                         }
                         const std::string action = ds[k]["action"].get<std::string>();
                         const std::string target = ds[k]["target"].get<std::string>();
                         if (action != "add" && !allowed[static_cast<size_t>(i)].count(target)) {
                           return Status::InvalidArgument(at + ".target: '" + target +
                                                          "' is not a handle listed under new fact " +
                                                          std::to_string(i));
                         }
                       }
                       return Status::Ok();
                     }};
  std::vector<ChatMessage> messages = {ChatMessage::System(kDecidePrompt), ChatMessage::User(listing)};
  MSP_ASSIGN_OR_RETURN(json reply, chat_->CompleteJson(messages, spec));
  std::map<std::string, std::string> id_of_handle(handles.begin(), handles.end());
  std::vector<bool> decided(n, false);
  for (const json& d : reply["decisions"]) {
    const size_t i = d["candidate"].get<size_t>();
    if (decided[i]) continue;  // the first decision for a fact counts
    decided[i] = true;
    const std::string action = d["action"].get<std::string>();
    FactCandidate& c = (*candidates)[i];
    if (action == "add") continue;
    c.action = action == "merge" ? FactAction::kMerge : FactAction::kSupersede;
    c.target_id = id_of_handle.at(d["target"].get<std::string>());
  }
  return Status::Ok();
}

Result<ChatOptions> ChatOptionsFor(const LlmOptions& llm, std::string_view openai_env_key) {
  ChatOptions o;
  o.base_url = llm.base_url;
  o.model = llm.model;
  o.api_key = llm.api_key;
  o.timeout_ms = llm.timeout_ms;
  o.max_retries = llm.max_retries;
  auto format = ParseResponseFormat(llm.response_format);
  if (!format.ok()) return format.status().WithContext("llm.response_format");
  o.response_format = *format;
  if (o.api_key.empty() && !openai_env_key.empty()) {
    auto url = net::ParseBaseUrl(llm.base_url);
    if (url.ok() && AsciiLower(url->host) == "api.openai.com") o.api_key = std::string(openai_env_key);
  }
  return o;
}

Result<std::unique_ptr<Extractor>> MakeConfiguredExtractor(const Options& options,
                                                           std::string_view openai_env_key) {
  if (options.consolidation.extractor == ExtractorKind::kRules) return MakeExtractor(options.consolidation);
  MSP_ASSIGN_OR_RETURN(ChatOptions chat_options, ChatOptionsFor(options.llm, openai_env_key));
  auto chat = ChatClient::Create(chat_options);
  if (!chat.ok()) return chat.status().WithContext("consolidation.extractor = llm");
  return std::unique_ptr<Extractor>(std::make_unique<LlmExtractor>(std::move(chat).value()));
}

}  // namespace msp
