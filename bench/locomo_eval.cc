// locomo_eval: retrieval quality of msp on LoCoMo, next to a plain BM25
// baseline. Every conversation's turns are stored as episodes through the
// real engine, every question with evidence is asked through Retrieve, and
// the hits are scored against the evidence turns (bench/README.md, "LoCoMo
// evaluation").
//   locomo_eval [--system msp|bm25|both] [--json OUT] [--limit-conversations N] ...
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "locomo/bm25.h"
#include "locomo/dataset.h"
#include "locomo/metrics.h"
#include "msp/memory.h"
#include "msp/options.h"
#include "working/tokens.h"

namespace msp::locomo {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// How deep --ranks looks for the evidence turns.
constexpr int kRanksDepth = 200;

double MsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

struct EvalConfig {
  std::string data_path;
  std::string json_out;
  std::string ranks_out;  // JSONL, one line per question (msp only)
  bool run_msp = true;
  bool run_bm25 = true;
  int limit_conversations = 0;
  int passage_turns = 1;  // > 1: the long-record variant (JoinTurns)
  int top_sessions = kTopK;  // RetrieveRequest::top_sessions of msp's Search
  TurnFormat turn_format = TurnFormat::kSpeaker;
  bool captions = true;
  RetrievalOptions retrieval;
  int dimension = EmbedderOptions().dimension;
  EmbedderProvider embedder = EmbedderOptions().provider;
  std::string vectors_path;
  std::string model;         // embedder.model: the native embedder's model directory
  std::string features_out;  // JSONL for the calibration fit (bench/calibrate.py)
  int context_steps = 0;     // > 0: also score top `context_hits` hits with their context
  int context_hits = 5;
};

template <typename T>
Status ParseNumber(std::string_view flag, std::string_view text, T* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(std::string(flag) + " needs a number, got '" + std::string(text) + "'");
  }
  return Status::Ok();
}

// One command-line flag: its name, the name of its value (empty: a switch),
// what it does, and how it sets the configuration.
struct Flag {
  const char* name;
  const char* value;
  const char* help;
  std::function<Status(EvalConfig*, std::string_view)> set;
};

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> kFlags = {
      {"--data", "PATH", "locomo10.json (default: $MSP_LOCOMO, else ../shared/bench-data/locomo10.json)",
       [](EvalConfig* c, std::string_view v) { c->data_path = v; return Status::Ok(); }},
      {"--json", "OUT", "also write every number as JSON to OUT",
       [](EvalConfig* c, std::string_view v) { c->json_out = v; return Status::Ok(); }},
      {"--ranks", "OUT",
       "write, per question, the rank (1-based, within the first 200 of msp) of each evidence turn as JSONL",
       [](EvalConfig* c, std::string_view v) { c->ranks_out = v; return Status::Ok(); }},
      {"--system", "msp|bm25|both", "which systems to run (default both)",
       [](EvalConfig* c, std::string_view v) {
         if (v != "msp" && v != "bm25" && v != "both") {
           return Status::InvalidArgument("--system is msp, bm25 or both, got '" + std::string(v) + "'");
         }
         c->run_msp = v != "bm25";
         c->run_bm25 = v != "msp";
         return Status::Ok();
       }},
      {"--limit-conversations", "N", "only the first N conversations (default: all 10)",
       [](EvalConfig* c, std::string_view v) {
         MSP_RETURN_IF_ERROR(ParseNumber("--limit-conversations", v, &c->limit_conversations));
         if (c->limit_conversations < 0) return Status::InvalidArgument("--limit-conversations must be >= 0");
         return Status::Ok();
       }},
      {"--passage-turns", "N",
       "the long-record variant: every N consecutive turns of a session stored as one record (default 1)",
       [](EvalConfig* c, std::string_view v) {
         MSP_RETURN_IF_ERROR(ParseNumber("--passage-turns", v, &c->passage_turns));
         if (c->passage_turns < 1) return Status::InvalidArgument("--passage-turns must be >= 1");
         return Status::Ok();
       }},
      {"--top-sessions", "N", "sessions msp's Search ranks beside the hits (default 20; 0: none)",
       [](EvalConfig* c, std::string_view v) {
         MSP_RETURN_IF_ERROR(ParseNumber("--top-sessions", v, &c->top_sessions));
         if (c->top_sessions < 0) return Status::InvalidArgument("--top-sessions must be >= 0");
         return Status::Ok();
       }},
      {"--turn-format", "speaker|plain|dated",
       "a turn's text: 'Speaker: text' (default), 'text', or '[date] Speaker: text'",
       [](EvalConfig* c, std::string_view v) {
         MSP_ASSIGN_OR_RETURN(c->turn_format, ParseTurnFormat(v));
         return Status::Ok();
       }},
      {"--no-captions", "", "leave out the ' [image: caption]' of turns that share an image",
       [](EvalConfig* c, std::string_view) { c->captions = false; return Status::Ok(); }},
      {"--lexical-weight", "X", "retrieval.lexical_weight of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--lexical-weight", v, &c->retrieval.lexical_weight); }},
      {"--vector-weight", "X", "retrieval.vector_weight of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--vector-weight", v, &c->retrieval.vector_weight); }},
      {"--fusion", "score|rrf", "retrieval.fusion of msp",
       [](EvalConfig* c, std::string_view v) {
         if (v != "score" && v != "rrf") return Status::InvalidArgument("--fusion is score or rrf");
         c->retrieval.fusion = v == "rrf" ? Fusion::kRrf : Fusion::kScore;
         return Status::Ok();
       }},
      {"--rrf-k", "N", "retrieval.rrf_k of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--rrf-k", v, &c->retrieval.rrf_k); }},
      {"--candidates", "N", "retrieval.candidates of msp (per signal, before fusion)",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--candidates", v, &c->retrieval.candidates); }},
      {"--vector-candidates", "N", "retrieval.vector_candidates of msp (0: --candidates)",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--vector-candidates", v, &c->retrieval.vector_candidates);
       }},
      {"--vector-min-cosine", "X", "retrieval.vector_min_cosine of msp",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--vector-min-cosine", v, &c->retrieval.vector_min_cosine);
       }},
      {"--context", "prior|sum", "retrieval.context of msp",
       [](EvalConfig* c, std::string_view v) {
         if (v != "prior" && v != "sum") return Status::InvalidArgument("--context is prior or sum");
         c->retrieval.context = v;
         return Status::Ok();
       }},
      {"--neighbour-weight-1", "X", "retrieval.neighbour_weight_1 of msp (steps +-1)",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--neighbour-weight-1", v, &c->retrieval.neighbour_weight_1);
       }},
      {"--neighbour-weight-2", "X", "retrieval.neighbour_weight_2 of msp (steps +-2)",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--neighbour-weight-2", v, &c->retrieval.neighbour_weight_2);
       }},
      {"--context-sessions", "N", "retrieval.context_sessions of msp",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--context-sessions", v, &c->retrieval.context_sessions);
       }},
      {"--session-weight", "X", "retrieval.session_weight of msp",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--session-weight", v, &c->retrieval.session_weight);
       }},
      {"--passage-bytes", "N", "retrieval.passage_bytes of msp (0: the default)",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--passage-bytes", v, &c->retrieval.passage_bytes); }},
      {"--max-tokens-per-hit", "N", "retrieval.max_tokens_per_hit of msp (0: no bound)",
       [](EvalConfig* c, std::string_view v) {
         return ParseNumber("--max-tokens-per-hit", v, &c->retrieval.max_tokens_per_hit);
       }},
      {"--scores", "calibrated|relative", "retrieval.scores of msp",
       [](EvalConfig* c, std::string_view v) {
         if (v != "calibrated" && v != "relative") return Status::InvalidArgument("--scores is calibrated or relative");
         c->retrieval.scores = v;
         return Status::Ok();
       }},
      {"--features-out", "OUT",
       "write, per question, its top 10 with each hit's relative score and the query's match (the calibration's "
       "inputs, from explain) as JSONL, also for each question asked of the next conversation and for word-salad "
       "queries (negatives), for bench/calibrate.py",
       [](EvalConfig* c, std::string_view v) { c->features_out = v; return Status::Ok(); }},
      {"--context-steps", "N",
       "also ask each question for --context-hits hits, each with the steps up to N away as its context "
       "(RetrieveRequest::context_steps), and report recall_all and tokens of what that shows",
       [](EvalConfig* c, std::string_view v) {
         MSP_RETURN_IF_ERROR(ParseNumber("--context-steps", v, &c->context_steps));
         if (c->context_steps < 0 || c->context_steps > 20) return Status::InvalidArgument("--context-steps is 0 to 20");
         return Status::Ok();
       }},
      {"--context-hits", "K", "hits asked for with --context-steps (default 5)",
       [](EvalConfig* c, std::string_view v) {
         MSP_RETURN_IF_ERROR(ParseNumber("--context-hits", v, &c->context_hits));
         if (c->context_hits < 1) return Status::InvalidArgument("--context-hits must be >= 1");
         return Status::Ok();
       }},
      {"--session-mix", "X", "retrieval.session_mix of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--session-mix", v, &c->retrieval.session_mix); }},
      {"--bm25-k1", "X", "retrieval.bm25_k1 of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--bm25-k1", v, &c->retrieval.bm25_k1); }},
      {"--bm25-b", "X", "retrieval.bm25_b of msp",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--bm25-b", v, &c->retrieval.bm25_b); }},
      {"--date-terms", "0|1", "retrieval.date_terms of msp",
       [](EvalConfig* c, std::string_view v) {
         if (v != "0" && v != "1") return Status::InvalidArgument("--date-terms is 0 or 1");
         c->retrieval.date_terms = v == "1";
         return Status::Ok();
       }},
      {"--dimension", "N", "embedder.dimension of msp's hashing embedder",
       [](EvalConfig* c, std::string_view v) { return ParseNumber("--dimension", v, &c->dimension); }},
      {"--embedder", "hashing|static|native",
       "embedder.provider: the built-in lexical or word-vector embedder, or a local BERT-family model (--model)",
       [](EvalConfig* c, std::string_view v) {
         if (v != "hashing" && v != "static" && v != "native") {
           return Status::InvalidArgument("--embedder is hashing, static or native");
         }
         c->embedder = v == "static" ? EmbedderProvider::kStatic
                       : v == "native" ? EmbedderProvider::kNative
                                       : EmbedderProvider::kHashing;
         return Status::Ok();
       }},
      {"--model", "DIR", "embedder.model: the native embedder's model directory (docs/embeddings.md)",
       [](EvalConfig* c, std::string_view v) {
         c->model = std::string(v);
         return Status::Ok();
       }},
      {"--vectors-path", "PATH", "embedder.vectors_path: the static embedder's word-vector table",
       [](EvalConfig* c, std::string_view v) {
         c->vectors_path = std::string(v);
         return Status::Ok();
       }},
  };
  return kFlags;
}

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: locomo_eval [flags]\n");
  for (const Flag& f : Flags()) {
    std::string lhs = std::string(f.name) + (*f.value ? std::string(" ") + f.value : "");
    std::fprintf(out, "  %-36s %s\n", lhs.c_str(), f.help);
  }
  std::fprintf(out, "  %-36s %s\n", "--help", "this text");
}

// Result<EvalConfig>, or nullopt when --help was asked.
Result<std::optional<EvalConfig>> ParseFlags(int argc, char** argv) {
  EvalConfig c;
  c.data_path = DefaultDataPath();
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return std::optional<EvalConfig>();
    std::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : Flags()) {
      if (arg == f.name) flag = &f;
    }
    if (!flag) return Status::InvalidArgument("unknown flag '" + std::string(arg) + "'; see --help");
    if (*flag->value && !has_value) {
      if (i + 1 >= argc) return Status::InvalidArgument(std::string(flag->name) + " needs a value");
      value = argv[++i];
    } else if (!*flag->value && has_value) {
      return Status::InvalidArgument(std::string(flag->name) + " takes no value");
    }
    MSP_RETURN_IF_ERROR(flag->set(&c, value));
  }
  const RetrievalOptions& r = c.retrieval;
  if (!(r.lexical_weight >= 0 && r.vector_weight >= 0) || r.lexical_weight + r.vector_weight <= 0) {
    return Status::InvalidArgument("--lexical-weight and --vector-weight must be >= 0, not both 0");
  }
  if (r.rrf_k < 1 || r.candidates < 1 || c.dimension < 1) {
    return Status::InvalidArgument("--rrf-k, --candidates and --dimension must be >= 1");
  }
  if (!(r.vector_min_cosine >= -1 && r.vector_min_cosine <= 1)) {
    return Status::InvalidArgument("--vector-min-cosine must be between -1 and 1");
  }
  return std::optional<EvalConfig>(std::move(c));
}

// A temporary data directory, removed with everything in it on destruction.
class TempDir {
 public:
  static Result<TempDir> Make() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msp-locomo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return Status::IoError("cannot create a temporary directory " + tmpl);
    return TempDir(tmpl);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

// One system's scores over every conversation and over each half:
// conversations 0-4 are the half the defaults were tuned on, 5-9 the
// held-out half, reported apart.
constexpr size_t kTuningConversations = 5;

class Boards {
 public:
  Boards(const std::string& name, const std::string& description, bool turn_level)
      : all_(name, description, turn_level),
        tuning_(name + " [conversations 0-4, the tuning half]", description, turn_level),
        held_out_(name + " [conversations 5-9, held out]", description, turn_level) {}

  void AddTurnRanking(size_t conversation, int category, const std::vector<std::string>& evidence,
                      const std::vector<std::string>& ranked_turns, double tokens_at_10, double latency_ms) {
    all_.AddTurnRanking(category, evidence, ranked_turns, tokens_at_10, latency_ms);
    Half(conversation).AddTurnRanking(category, evidence, ranked_turns, tokens_at_10, latency_ms);
  }
  void AddSessionRanking(size_t conversation, int category, const std::vector<std::string>& evidence,
                         const std::vector<std::string>& ranked_sessions, double latency_ms) {
    all_.AddSessionRanking(category, evidence, ranked_sessions, latency_ms);
    Half(conversation).AddSessionRanking(category, evidence, ranked_sessions, latency_ms);
  }
  std::string Table() const {
    std::string out = all_.Table();
    for (const Scoreboard* half : {&tuning_, &held_out_}) {
      if (half->row(0).questions > 0) out += "\n" + half->Table();
    }
    return out;
  }
  json ToJson() const {
    json j = all_.ToJson();
    j["tuning_half"] = tuning_.ToJson();
    j["held_out_half"] = held_out_.ToJson();
    return j;
  }

 private:
  Scoreboard& Half(size_t conversation) { return conversation < kTuningConversations ? tuning_ : held_out_; }

  Scoreboard all_, tuning_, held_out_;
};

// ---- msp ----------------------------------------------------------------

Namespace ConversationScope(const Conversation& c) {
  Namespace ns;
  ns.tenant = "locomo";
  ns.user = c.sample_id;
  return ns;
}

// Stores every turn as an episode: session "session_N", step = the turn's
// 1-based index, created at the session's date, body content
// {"text", "dia_id", "session_date", "speaker"}.
Status StoreConversation(MemoryLayer& mem, const Conversation& c) {
  for (const Session& s : c.sessions) {
    for (size_t t : s.turns) {
      const Turn& turn = c.turns[t];
      EpisodeStep step;
      step.ns = ConversationScope(c);
      step.ns.session = "session_" + std::to_string(s.number);
      step.step_number = turn.index;
      step.type = EpisodeType::kUserMessage;
      step.content_json = json{{"text", turn.text},
                               {"dia_id", turn.dia_id},
                               {"session_date", s.date},
                               {"speaker", turn.speaker}}
                              .dump();
      step.timestamp = s.timestamp;
      step.source = "locomo";
      step.actor = "locomo_eval";
      Result<Memory> m = mem.AddEpisode(step);
      if (!m.ok()) return m.status().WithContext(c.sample_id + " " + turn.dia_id);
    }
  }
  return Status::Ok();
}

// The dia_id an episode was stored with (from its body's content).
Result<std::string> DiaIdOf(const Memory& m) {
  const json body = json::parse(m.body_json, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.contains("content") && body["content"].is_object()) {
    const json& content = body["content"];
    if (content.contains("dia_id") && content["dia_id"].is_string()) return content["dia_id"].get<std::string>();
  }
  return Status::Internal("hit " + m.id + " has no content.dia_id in its body: " + m.body_json);
}

struct MspBoards {
  Boards hits;      // the turn ranking (and the session ranking it implies)
  Boards sessions;  // the session ranking Search answers beside the hits
};

// "session_12" -> "D12", as the evidence ids name sessions.
std::string EvidenceSession(const std::string& session) {
  constexpr std::string_view kPrefix = "session_";
  return "D" + (session.rfind(kPrefix, 0) == 0 ? session.substr(kPrefix.size()) : session);
}

// What a hit shows: its passage, or the whole text.
std::string_view ShownText(const SearchHit& h) { return h.passage.empty() ? h.memory.text : h.passage; }

// The calibration's inputs for each of a search's first 10 hits: its
// relative score and the query's match (SearchHit::explain's "calibration"
// entry: raw = the match, contribution = calibrated - relative), with the
// turn it is and the tokens it shows.
Result<json> HitFeatures(const RetrieveResult& result, const TokenCounter& counter) {
  json hits = json::array();
  for (const SearchHit& h : result.hits) {
    if (hits.size() >= static_cast<size_t>(kTopK)) break;
    double relative = h.score, match = 0.0;
    for (const SignalContribution& c : h.explain) {
      if (c.signal == "calibration") {
        relative = h.score - c.contribution;
        match = c.raw;
      }
    }
    MSP_ASSIGN_OR_RETURN(std::string dia_id, DiaIdOf(h.memory));
    hits.push_back({{"id", dia_id}, {"relative", relative}, {"match", match}, {"score", h.score},
                    {"tokens", counter.Count(ShownText(h))}});
  }
  return hits;
}

// bench/calibrate.py's input: every question of every conversation with its
// top 10 (kind "question"), the same question asked of the next
// conversation, whose people and events it is not about ("wrong"), and
// word-salad queries of the questions' words (5 a conversation, "salad"),
// about nothing.
Status WriteFeatures(MemoryLayer& mem, const Dataset& data, const TokenCounter& counter, const std::string& path) {
  std::ofstream out(path);
  if (!out) return Status::IoError("cannot write " + path);
  std::vector<std::string> words;
  for (const Conversation& c : data.conversations) {
    for (const Question& q : c.questions) {
      std::string w;
      for (char ch : q.question + " ") {
        if (std::isalpha(static_cast<unsigned char>(ch))) {
          w.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
        } else if (!w.empty()) {
          if (w.size() > 3) words.push_back(w);
          w.clear();
        }
      }
    }
  }
  std::mt19937 rng(23);
  auto ask = [&](const Conversation& scope, const std::string& query) -> Result<json> {
    RetrieveRequest r;
    r.scope = ConversationScope(scope);
    r.query = query;
    r.top_k = kTopK;
    r.top_sessions = 0;
    r.record_access = false;
    r.explain = true;
    MSP_ASSIGN_OR_RETURN(RetrieveResult result, mem.Search(r));
    return HitFeatures(result, counter);
  };
  const size_t n = data.conversations.size();
  for (size_t ci = 0; ci < n; ++ci) {
    const Conversation& c = data.conversations[ci];
    const Conversation& next = data.conversations[(ci + 1) % n];
    for (const Question& q : c.questions) {
      MSP_ASSIGN_OR_RETURN(json hits, ask(c, q.question));
      out << json{{"conversation", ci}, {"kind", "question"}, {"category", q.category}, {"question", q.question},
                  {"evidence", q.evidence}, {"hits", hits}}.dump() << "\n";
      if (n > 1) {
        MSP_ASSIGN_OR_RETURN(json wrong, ask(next, q.question));
        out << json{{"conversation", ci}, {"kind", "wrong"}, {"category", q.category}, {"question", q.question},
                    {"hits", wrong}}.dump() << "\n";
      }
    }
    for (int k = 0; k < 5 && !words.empty(); ++k) {
      std::string query;
      const int len = 3 + static_cast<int>(rng() % 4);
      for (int w = 0; w < len; ++w) query += (w ? " " : "") + words[rng() % words.size()];
      MSP_ASSIGN_OR_RETURN(json hits, ask(c, query));
      out << json{{"conversation", ci}, {"kind", "salad"}, {"question", query}, {"hits", hits}}.dump() << "\n";
    }
  }
  return out ? Status::Ok() : Status::IoError("writing " + path + " failed");
}

Result<MspBoards> RunMsp(const Dataset& data, const EvalConfig& cfg, json* build) {
  MSP_ASSIGN_OR_RETURN(TempDir dir, TempDir::Make());
  Options o;
  o.store.data_dir = dir.path();
  o.store.synchronous = "normal";
  o.embedder.dimension = cfg.dimension;
  o.embedder.provider = cfg.embedder;
  o.embedder.vectors_path = cfg.vectors_path;
  o.embedder.model = cfg.model;
  o.retrieval = cfg.retrieval;
  o.consolidation.every_n_episodes = 0;  // no facts: retrieval over the turns alone
  o.policy.min_chars = 0;                 // short turns ("Sure!") are kept
  o.policy.trivial_phrases.clear();
  o.policy.max_items_per_user = 0;
  o.actor = "locomo_eval";
  MSP_ASSIGN_OR_RETURN(std::unique_ptr<MemoryLayer> mem, MemoryLayer::Open(o));

  auto start = SteadyClock::now();
  size_t turns = 0;
  for (const Conversation& c : data.conversations) {
    MSP_RETURN_IF_ERROR(StoreConversation(*mem, c));
    turns += c.turns.size();
  }
  const double load_ms = MsSince(start);
  // The indexes catch up with the store before a query; do it once here so
  // that the first question's latency does not carry the whole build.
  start = SteadyClock::now();
  Namespace tenant;
  tenant.tenant = "locomo";
  MSP_ASSIGN_OR_RETURN(Stats stats, mem->GetStats(tenant));
  const double index_ms = MsSince(start);
  if (stats.records != static_cast<int64_t>(turns)) {
    return Status::Internal("stored " + std::to_string(turns) + " turns but the store holds " +
                            std::to_string(stats.records) + " records");
  }
  (*build)["episodes"] = turns;
  (*build)["load_seconds"] = load_ms / 1000;
  (*build)["index_seconds"] = index_ms / 1000;
  (*build)["embedder"] = stats.embedder_id;
  std::fprintf(stderr, "msp: stored %zu episodes in %.1f s, indexes caught up in %.1f s\n", turns,
               load_ms / 1000, index_ms / 1000);

  char desc[512];
  std::snprintf(desc, sizeof desc,
                "engine Search, %s, context %s, fusion %s, lexical_weight %g, vector_weight %g, rrf_k %d, candidates %d, vector_candidates %d, "
                "vector_min_cosine %g, bm25 k1 %g b %g, date_terms %d, neighbour_weight_1 %g, neighbour_weight_2 %g, "
                "context_sessions %d, session_weight %g, session_mix %g",
                stats.embedder_id.c_str(), cfg.retrieval.context.c_str(), std::string(NameOf(cfg.retrieval.fusion)).c_str(), cfg.retrieval.lexical_weight, cfg.retrieval.vector_weight,
                cfg.retrieval.rrf_k, cfg.retrieval.candidates, cfg.retrieval.vector_candidates, cfg.retrieval.vector_min_cosine,
                cfg.retrieval.bm25_k1, cfg.retrieval.bm25_b, cfg.retrieval.date_terms ? 1 : 0, cfg.retrieval.neighbour_weight_1,
                cfg.retrieval.neighbour_weight_2, cfg.retrieval.context_sessions, cfg.retrieval.session_weight,
                cfg.retrieval.session_mix);
  MspBoards boards{Boards("msp", desc, /*turn_level=*/true),
                   Boards("msp-sessions", "the session ranking of msp's Search (RetrieveResult::sessions)",
                          /*turn_level=*/false)};
  const std::unique_ptr<TokenCounter> counter = DefaultTokenCounter();
  std::ofstream ranks_out;
  if (!cfg.ranks_out.empty()) {
    ranks_out.open(cfg.ranks_out);
    if (!ranks_out) return Status::IoError("cannot write " + cfg.ranks_out);
  }
  // With --context-steps: per half (0: tuning, 1: held out), questions,
  // those with every evidence turn shown, and the tokens shown.
  struct ContextTally {
    int questions = 0;
    int all_shown = 0;
    double tokens = 0;
  } context_tally[2];
  for (size_t ci = 0; ci < data.conversations.size(); ++ci) {
    const Conversation& c = data.conversations[ci];
    for (const Question& q : c.questions) {
      if (cfg.context_steps > 0) {
        RetrieveRequest with_context;
        with_context.scope = ConversationScope(c);
        with_context.query = q.question;
        with_context.top_k = cfg.context_hits;
        with_context.top_sessions = 0;
        with_context.context_steps = cfg.context_steps;
        with_context.record_access = false;
        MSP_ASSIGN_OR_RETURN(RetrieveResult shown, mem->Search(with_context));
        std::vector<std::string> shown_turns;
        ContextTally& t = context_tally[ci < kTuningConversations ? 0 : 1];
        auto show = [&](const SearchHit& part) -> Status {
          MSP_ASSIGN_OR_RETURN(std::string dia_id, DiaIdOf(part.memory));
          shown_turns.push_back(std::move(dia_id));
          t.tokens += static_cast<double>(counter->Count(ShownText(part)));
          return Status::Ok();
        };
        for (const SearchHit& h : shown.hits) {
          MSP_RETURN_IF_ERROR(show(h));
          for (const SearchHit& step : h.context) MSP_RETURN_IF_ERROR(show(step));
        }
        ++t.questions;
        t.all_shown += std::all_of(q.evidence.begin(), q.evidence.end(), [&](const std::string& e) {
          return std::find(shown_turns.begin(), shown_turns.end(), e) != shown_turns.end();
        });
      }
      RetrieveRequest r;
      r.scope = ConversationScope(c);
      r.query = q.question;
      r.top_k = cfg.ranks_out.empty() ? kTopK : kRanksDepth;
      r.top_sessions = cfg.top_sessions;
      r.record_access = false;
      start = SteadyClock::now();
      Result<RetrieveResult> result = mem->Search(r);
      const double latency = MsSince(start);
      if (!result.ok()) return result.status().WithContext(c.sample_id + " question '" + q.question + "'");
      std::vector<std::string> ranked_sessions;
      for (const SessionHit& s : result->sessions) ranked_sessions.push_back(EvidenceSession(s.ns.session));
      boards.sessions.AddSessionRanking(ci, q.category, q.evidence, ranked_sessions, latency);
      std::vector<std::string> ranked;
      double tokens = 0;
      for (const SearchHit& h : result->hits) {
        MSP_ASSIGN_OR_RETURN(std::string dia_id, DiaIdOf(h.memory));
        if (!c.turn_by_id.count(dia_id)) {
          return Status::Internal("hit " + dia_id + " is not a turn of " + c.sample_id);
        }
        if (ranked.size() < 10) tokens += static_cast<double>(counter->Count(ShownText(h)));
        ranked.push_back(std::move(dia_id));
      }
      if (ranks_out.is_open()) {
        json ranks = json::object();
        for (const std::string& e : q.evidence) {
          auto at = std::find(ranked.begin(), ranked.end(), e);
          ranks[e] = at == ranked.end() ? 0 : static_cast<int>(at - ranked.begin()) + 1;
        }
        json top = json::array();
        for (const std::string& d : ranked) top.push_back(d);
        ranks_out << json{{"conversation", c.sample_id}, {"category", q.category}, {"question", q.question},
                          {"evidence", ranks}, {"top", top}}
                         .dump()
                  << "\n";
        if (ranked.size() > static_cast<size_t>(kTopK)) ranked.resize(kTopK);
      }
      boards.hits.AddTurnRanking(ci, q.category, q.evidence, ranked, tokens, latency);
    }
  }
  if (cfg.context_steps > 0) {
    const char* names[2] = {"conversations 0-4", "conversations 5-9"};
    ContextTally all;
    for (int h = 0; h < 2; ++h) {
      const ContextTally& t = context_tally[h];
      all.questions += t.questions;
      all.all_shown += t.all_shown;
      all.tokens += t.tokens;
      if (t.questions == 0) continue;
      std::printf("msp, %d hits with context %d steps, %s: every evidence turn shown %.3f, tokens %.0f\n",
                  cfg.context_hits, cfg.context_steps, names[h], static_cast<double>(t.all_shown) / t.questions,
                  t.tokens / t.questions);
    }
    if (all.questions > 0) {
      std::printf("msp, %d hits with context %d steps, all: every evidence turn shown %.3f, tokens %.0f\n\n",
                  cfg.context_hits, cfg.context_steps, static_cast<double>(all.all_shown) / all.questions,
                  all.tokens / all.questions);
    }
  }
  if (!cfg.features_out.empty()) MSP_RETURN_IF_ERROR(WriteFeatures(*mem, data, *counter, cfg.features_out));
  return boards;
}

// ---- BM25 ---------------------------------------------------------------

// The baseline over turns (one document a turn, the same text msp stores)
// and, for reference, over whole sessions (one document a session: its date
// and its turns, one a line).
std::pair<Boards, Boards> RunBm25(const Dataset& data) {
  Boards turns("bm25", "Okapi BM25 k1 1.2 b 0.75, one document a turn", true);
  Boards sessions("bm25-sessions", "Okapi BM25 k1 1.2 b 0.75, one document a session (date + its turns)", false);
  const std::unique_ptr<TokenCounter> counter = DefaultTokenCounter();
  for (size_t ci = 0; ci < data.conversations.size(); ++ci) {
    const Conversation& c = data.conversations[ci];
    Bm25Index by_turn;
    for (const Turn& t : c.turns) by_turn.Add(t.text);
    Bm25Index by_session;
    for (const Session& s : c.sessions) {
      std::string doc = s.date;
      for (size_t t : s.turns) doc += "\n" + c.turns[t].text;
      by_session.Add(doc);
    }
    for (const Question& q : c.questions) {
      auto start = SteadyClock::now();
      const std::vector<size_t> docs = by_turn.Search(q.question, kTopK);
      double latency = MsSince(start);
      std::vector<std::string> ranked;
      double tokens = 0;
      for (size_t d : docs) {
        if (ranked.size() < 10) tokens += static_cast<double>(counter->Count(c.turns[d].text));
        ranked.push_back(c.turns[d].dia_id);
      }
      turns.AddTurnRanking(ci, q.category, q.evidence, ranked, tokens, latency);

      start = SteadyClock::now();
      const std::vector<size_t> sdocs = by_session.Search(q.question, kTopK);
      latency = MsSince(start);
      std::vector<std::string> ranked_sessions;
      for (size_t d : sdocs) ranked_sessions.push_back("D" + std::to_string(c.sessions[d].number));
      sessions.AddSessionRanking(ci, q.category, q.evidence, ranked_sessions, latency);
    }
  }
  return {std::move(turns), std::move(sessions)};
}

// ---- report -------------------------------------------------------------

json DatasetSummary(const Dataset& data, const EvalConfig& cfg) {
  size_t sessions = 0, turns = 0, questions = 0;
  for (const Conversation& c : data.conversations) {
    sessions += c.sessions.size();
    turns += c.turns.size();
    questions += c.questions.size();
  }
  const EvidenceReport& e = data.evidence;
  return json{{"path", cfg.data_path},
              {"conversations", data.conversations.size()},
              {"sessions", sessions},
              {"turns", turns},
              {"turn_format", std::string(TurnFormatName(cfg.turn_format))},
              {"captions", cfg.captions},
              {"passage_turns", cfg.passage_turns},
              {"questions_total", e.questions},
              {"questions_evaluated", questions},
              {"skipped_without_evidence", e.without_evidence},
              {"skipped_all_evidence_dropped", e.all_evidence_dropped},
              {"evidence_strings", e.evidence_strings},
              {"evidence_strings_normalised", e.strings_normalised},
              {"evidence_ids_dropped", e.ids_dropped},
              {"evidence_changes", e.changes}};
}

int Main(int argc, char** argv) {
  Result<std::optional<EvalConfig>> parsed = ParseFlags(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "locomo_eval: %s\n", parsed.status().message().c_str());
    PrintUsage(stderr);
    return 2;
  }
  if (!parsed->has_value()) {
    PrintUsage(stdout);
    return 0;
  }
  const EvalConfig cfg = std::move(**parsed);
  Result<Dataset> data = LoadDataset(cfg.data_path, cfg.turn_format, cfg.captions, cfg.limit_conversations);
  if (!data.ok()) {
    std::fprintf(stderr, "locomo_eval: %s\n", data.status().ToString().c_str());
    return 1;
  }
  JoinTurns(&*data, cfg.passage_turns);
  json report;
  report["dataset"] = DatasetSummary(*data, cfg);
  report["top_k"] = kTopK;
  const json& d = report["dataset"];
  std::printf("LoCoMo %s: %d conversations, %d sessions, %d %s; turn text '%s'%s\n",
              cfg.data_path.c_str(), d["conversations"].get<int>(), d["sessions"].get<int>(),
              d["turns"].get<int>(),
              cfg.passage_turns > 1 ? ("records of " + std::to_string(cfg.passage_turns) + " turns").c_str() : "turns",
              std::string(TurnFormatName(cfg.turn_format)).c_str(), cfg.captions ? " with captions" : "");
  std::printf("questions: %d in the file, %d evaluated, %d skipped without evidence, %d skipped "
              "with no evidence left\n",
              data->evidence.questions, d["questions_evaluated"].get<int>(), data->evidence.without_evidence,
              data->evidence.all_evidence_dropped);
  std::printf("evidence: %d strings, %d normalised, %d ids dropped\n", data->evidence.evidence_strings,
              data->evidence.strings_normalised, data->evidence.ids_dropped);
  for (const std::string& change : data->evidence.changes) std::printf("  %s\n", change.c_str());
  std::printf("\n");

  if (cfg.run_msp) {
    json build;
    Result<MspBoards> boards = RunMsp(*data, cfg, &build);
    if (!boards.ok()) {
      std::fprintf(stderr, "locomo_eval: msp: %s\n", boards.status().ToString().c_str());
      return 1;
    }
    report["systems"]["msp"] = boards->hits.ToJson();
    if (cfg.top_sessions > 0) report["systems"]["msp-sessions"] = boards->sessions.ToJson();
    report["systems"]["msp"]["build"] = build;
    report["systems"]["msp"]["options"] = {{"context", cfg.retrieval.context},
                                           {"fusion", std::string(NameOf(cfg.retrieval.fusion))},
                                           {"lexical_weight", cfg.retrieval.lexical_weight},
                                           {"vector_weight", cfg.retrieval.vector_weight},
                                           {"rrf_k", cfg.retrieval.rrf_k},
                                           {"candidates", cfg.retrieval.candidates},
                                           {"vector_candidates", cfg.retrieval.vector_candidates},
                                           {"vector_min_cosine", cfg.retrieval.vector_min_cosine},
                                           {"bm25_k1", cfg.retrieval.bm25_k1},
                                           {"bm25_b", cfg.retrieval.bm25_b},
                                           {"date_terms", cfg.retrieval.date_terms},
                                           {"neighbour_weight_1", cfg.retrieval.neighbour_weight_1},
                                           {"neighbour_weight_2", cfg.retrieval.neighbour_weight_2},
                                           {"context_sessions", cfg.retrieval.context_sessions},
                                           {"session_weight", cfg.retrieval.session_weight},
                                           {"session_mix", cfg.retrieval.session_mix},
                                           {"passage_bytes", cfg.retrieval.passage_bytes},
                                           {"max_tokens_per_hit", cfg.retrieval.max_tokens_per_hit},
                                           {"scores", cfg.retrieval.scores},
                                           {"dimension", cfg.dimension},
                                           {"embedder", std::string(NameOf(cfg.embedder))}};
    std::printf("%s\n", boards->hits.Table().c_str());
    if (cfg.top_sessions > 0) std::printf("%s\n", boards->sessions.Table().c_str());
  }
  if (cfg.run_bm25) {
    auto [turns, sessions] = RunBm25(*data);
    report["systems"]["bm25"] = turns.ToJson();
    report["systems"]["bm25-sessions"] = sessions.ToJson();
    std::printf("%s\n%s\n", turns.Table().c_str(), sessions.Table().c_str());
  }
  if (!cfg.json_out.empty()) {
    std::ofstream out(cfg.json_out);
    out << report.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "locomo_eval: cannot write %s\n", cfg.json_out.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace msp::locomo

int main(int argc, char** argv) { return msp::locomo::Main(argc, argv); }
