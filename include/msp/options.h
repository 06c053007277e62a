// Options: the settings the library reads (MemoryLayer, WorkflowMemory,
// ProceduralMemory), as typed structs with their defaults.
//
// A library user fills them in code; the msp programs fill them (and their
// own settings: src/config/settings.h) once from flags, MSP_* environment
// variables and an optional TOML file (src/config/). The library reads no
// environment variable.
#ifndef MSP_OPTIONS_H_
#define MSP_OPTIONS_H_

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace msp {

// Settings with a fixed set of values. Each enum's k...Names, indexed by
// the enumerator's value, are the one spelling of its values: in the TOML
// file, the environment, the flags, `msp help config` and the errors.
enum class StoreBackend { kSqlite, kPostgres };
inline constexpr std::array<std::string_view, 2> kStoreBackendNames = {"sqlite", "postgres"};

enum class EmbedderProvider { kHashing, kStatic, kOpenai, kNative };
inline constexpr std::array<std::string_view, 4> kEmbedderProviderNames = {"hashing", "static", "openai", "native"};

enum class Fusion { kScore, kRrf };
inline constexpr std::array<std::string_view, 2> kFusionNames = {"score", "rrf"};

enum class ExtractorKind { kRules, kLlm };
inline constexpr std::array<std::string_view, 2> kExtractorKindNames = {"rules", "llm"};

// The settings' spelling of a value: NameOf(StoreBackend::kPostgres) is "postgres".
constexpr std::string_view NameOf(StoreBackend v) { return kStoreBackendNames[static_cast<size_t>(v)]; }
constexpr std::string_view NameOf(EmbedderProvider v) { return kEmbedderProviderNames[static_cast<size_t>(v)]; }
constexpr std::string_view NameOf(Fusion v) { return kFusionNames[static_cast<size_t>(v)]; }
constexpr std::string_view NameOf(ExtractorKind v) { return kExtractorKindNames[static_cast<size_t>(v)]; }

struct StoreOptions {
  // sqlite: msp.db in data_dir; postgres: postgres_url (docs/postgres.md).
  StoreBackend backend = StoreBackend::kSqlite;
  // Data directory: holds msp.db (the truth) and the derived indexes.
  std::string data_dir = ".msp";
  // What a relative data_dir is relative to: "current", the current
  // directory; "repository", the top of the git work tree holding the
  // current directory (the current directory outside one), so that every
  // process started anywhere in a repository (Claude Code's MCP server in a
  // subdirectory) uses the repository's one store. The config loader
  // resolves it (src/config).
  std::string data_dir_base = "current";
  // SQLite synchronous mode: "full" survives power loss, "normal" survives a
  // killed process (WAL).
  std::string synchronous = "full";
  int busy_timeout_ms = 10000;
  // PostgreSQL (backend "postgres", docs/postgres.md): the database as a
  // libpq connection string or URL ("postgresql://msp@db1:5432/msp",
  // "host=/run/postgresql dbname=msp"); empty: libpq's defaults ($PGHOST,
  // $PGDATABASE, ...). data_dir then holds only this server's derived indexes.
  std::string postgres_url;
  // The PostgreSQL schema holding msp's tables: lower-case letters, digits
  // and '_', starting with a letter or '_'. Created if missing.
  std::string postgres_schema = "msp";
  int postgres_pool_size = 8;                 // connections per process, >= 1
  // Connecting, and waiting for a free pooled connection, in ms.
  int postgres_connect_timeout_ms = 5000;
  int postgres_statement_timeout_ms = 30000;  // per statement; 0: none
  // Encryption at rest (sqlite only, docs/encryption.md): a file holding the
  // key (64 hex digits, mode 0600), or the key itself (from
  // $MSP_ENCRYPTION_KEY). Either one set encrypts msp.db and its WAL and keeps
  // the derived indexes in memory.
  std::string encryption_key_file;
  std::string encryption_key;
  // How long a write's idempotency key (--request-id, Idempotency-Key,
  // request_id) is remembered, in hours: a repeat within it answers the
  // first result. Expired keys are pruned as writes go.
  int idempotency_ttl_hours = 24;
};

struct EmbedderOptions {
  // "hashing": the built-in lexical hashing embedder; "static": the built-in
  // word-vector (GloVe) embedder, semantic, its table installed by
  // scripts/deps.sh; "openai": an OpenAI-compatible server; "native": a
  // BERT-family sentence encoder run in-process from a local model
  // directory (`model`; docs/embeddings.md).
  EmbedderProvider provider = EmbedderProvider::kHashing;
  // Vector size. For "openai" it must equal what the model returns (768 for
  // nomic-embed-text, 1536 for text-embedding-3-small): a reply of another
  // size is an error naming both. It is part of the embedder's identity.
  int dimension = 384;
  // For "static": the word-vector table (empty: the one scripts/deps.sh
  // makes, embed/static/static_embedder.h). Its rows set the dimension;
  // `dimension` is not used.
  std::string vectors_path;
  // The rest is for provider "openai" (any OpenAI-compatible POST
  // /embeddings: Ollama, llama.cpp server, vLLM, TEI, OpenAI).
  std::string base_url = "http://localhost:11434/v1";  // up to and including /v1
  // "openai": the model name (required); "native": the model directory
  // (model.safetensors, config.json, vocab.txt or tokenizer.json; required).
  std::string model;
  // Bearer token; empty: none, or $OPENAI_API_KEY when base_url is
  // https://api.openai.com.
  std::string api_key;
  int batch_size = 64;               // texts per request
  int timeout_ms = 60000;            // per request (connect and read)
  int max_retries = 3;               // on 408, 429, 5xx, malformed replies, transport errors
  // For "native": threads one Embed call uses (0: one per core, at most 8),
  // and the pooling ("auto": the model's 1_Pooling/config.json, else mean;
  // "mean"; "cls"). The model sets the dimension; `dimension` is not used.
  int threads = 0;
  std::string pooling = "auto";
  // For "native": "none", or "int8" (the linear layers' weights quantised
  // per output channel at load, activations per row: docs/embeddings.md).
  std::string quantize = "none";
};

// The write policy of seed 004. Each rule can be switched off; each refusal
// names the rule that fired.
struct WritePolicyOptions {
  size_t min_chars = 20;                 // shorter text is refused (0: off)
  // Acknowledgements refused as trivial (whole text, any case, trailing
  // punctuation ignored), per language: English, Ukrainian, Russian,
  // German, French, Spanish, Polish.
  std::vector<std::string> trivial_phrases = {
      "ok", "okay", "thanks", "thank you", "done", "ready", "got it", "sure", "yes", "no",
      "дякую", "спасибі", "добре", "гаразд", "так", "ні", "готово", "зрозуміло", "окей",
      "спасибо", "хорошо", "да", "нет", "понятно", "ладно",
      "danke", "danke schön", "ja", "nein", "fertig", "alles klar",
      "merci", "merci beaucoup", "oui", "non", "d'accord", "compris",
      "gracias", "sí", "vale", "listo", "de acuerdo",
      "dziękuję", "dzięki", "tak", "nie", "gotowe", "jasne"};
  bool refuse_high_sensitivity = true;
  std::vector<std::string> trusted_sources = {"user", "tool", "policy", "agent"};
  // Sources whose records are labelled "trusted" where stored text reaches a
  // model (working memory, digests, MCP results); every other source (tool,
  // web, ingest, import, agent, consolidation, ...) is labelled "untrusted":
  // data to weigh, never instructions to follow (docs/access.md).
  std::vector<std::string> context_trusted_sources = {"user", "operator", "policy", "procedural"};
  // "note": a durable note that is none of the others (what an agent is
  // told to remember; memory_write's default tag, mcp.write_default_tag).
  std::vector<std::string> stable_tags = {"preference", "constraint", "profile", "goal", "note"};
  bool require_stable_tag = true;
  int ttl_min_days = 1;
  int ttl_max_days = 365;
  int default_ttl_days = 0;              // 0: records without a TTL never expire
  size_t max_items_per_user = 200;       // kind fact per (tenant, user); 0: no limit
  size_t max_text_bytes = 32768;         // every write but episodes and imported records
  // Episodes and imported records: a text up to this is stored whole, and
  // the lexical index holds a long one as passages (retrieval.passage_bytes)
  // so that a hit shows the part that matched.
  size_t max_record_bytes = size_t{1} << 20;
  // An imported record over max_record_bytes: "refuse" (the import fails,
  // nothing imported), "split" (stored as consecutive records of at most
  // max_record_bytes, each after the first a new id with provenance
  // "split_from" naming the first) or "truncate" (its first
  // max_record_bytes, cut at a character boundary). msp import
  // --on-oversize.
  std::string on_oversize = "refuse";
};

struct RetrievalOptions {
  // How the lexical and vector signals are fused: "score", the weighted
  // mean of their scores on [0, 1] (the lexical one over the query's best,
  // the cosine clipped at 0), which keeps the gaps between lexical scores;
  // or "rrf", weighted reciprocal-rank fusion, which sees ranks only, so a
  // small vector weight can still swap lexical hits far apart in score.
  // LoCoMo turn recall_all@1/@5/@10: rrf 0.305/0.607/0.705, score
  // 0.316/0.625/0.709 (bench/README.md).
  Fusion fusion = Fusion::kScore;
  int rrf_k = 60;                        // the rrf constant k
  double lexical_weight = 1.0;
  // The built-in hashing embedder is lexical and weaker than BM25: at equal
  // weight it pulls LoCoMo turn recall_all@10 from 0.578 (BM25 alone) down
  // to 0.475; at 0.1 it costs nothing measurable (0.576). Raise it for a
  // semantic embedder. (bench/locomo_eval --vector-weight W)
  double vector_weight = 0.1;
  int candidates = 200;                  // per signal, before fusion
  // Candidates of the vector signal when > 0 (else `candidates`). With a
  // small vector_weight only its first few ranks can still move a hit into
  // the top k, and the exact scan's cost grows with the number asked.
  int vector_candidates = 0;
  // The vector signal ignores records below this cosine: with a lexical
  // embedder unrelated texts share stray hash buckets and would otherwise
  // still earn reciprocal-rank credit.
  double vector_min_cosine = 0.05;
  std::string language = "english";      // Snowball stemmer and stop words
  // Okapi BM25 of the lexical index: term-frequency saturation k1 and
  // length normalisation b. The defaults are the Lucene / Anserini ones,
  // the usual BM25 baseline of IR research, rather than the k1 1.2, b 0.75
  // tuned on long news articles: memories are short, and a short turn is
  // not more on topic for being short. LoCoMo turn recall_all@10 0.691 ->
  // 0.705 (bench/README.md has the ablation).
  double bm25_k1 = 0.9;
  double bm25_b = 0.4;
  // Index each record's month and year (of created_at) as words, so a query
  // naming a month or a year matches what happened then. Changing it
  // rebuilds the lexical index on the next open. (LoCoMo turn recall_all@10
  // 0.576 -> 0.580, session recall_all@5 0.809 -> 0.812.)
  bool date_terms = true;
  // Episode context (src/core/rank/episode_context.h): how an episode's own
  // match and what surrounds it (the steps next to it in its session, and
  // the session as a whole) make its score.
  //   "prior" (default): the episode is ranked by its own evidence and its
  //   neighbours' discounted, as independent chances that it is what the
  //   query asks for (noisy-or): evidence = 1 - (1 - own) x (1 -
  //   neighbour_weight_1 x the best own score of the steps +-1) x (1 -
  //   neighbour_weight_2 x that of the steps +-2), on [0, 1]. A step that
  //   shares no word with the query stays below the step it borrows from,
  //   and a step among many weak matches gains no more than beside the
  //   best of them. Its session adds a bounded prior, session_weight / (1 +
  //   the session's rank in the session ranking, 0 first). Which sessions
  //   matter is answered apart (MemoryLayer::Search, RetrieveResult::
  //   sessions). LoCoMo (bench/README.md): turn recall_all@10 0.717 as with
  //   "sum", distinct sessions in the top 10 3.9 instead of 2.8.
  //   "sum" (issue 3's ranking): score = own + neighbour_weight_1 x (the sum
  //   of steps +-1) + neighbour_weight_2 x (steps +-2) + session_weight x
  //   (session_mix x session BM25 / the best + (1 - session_mix) x the
  //   session's best own score): context can outweigh a step's own match,
  //   so the turns of the best sessions crowd out answers elsewhere (use
  //   session_weight 0.75 for issue 3's numbers).
  // Every score is BM25 divided by the query's best BM25.
  std::string context = "prior";
  double neighbour_weight_1 = 0.5;
  double neighbour_weight_2 = 0.4;
  // This many sessions have every visible episode scored, so that a turn
  // sharing no word with the query can still rank by its neighbours: those
  // with the highest session BM25 among the first 20 sessions the BM25 hits
  // reach (0: only BM25 hits are candidates).
  int context_sessions = 5;
  // The session prior's bound ("prior") or boost ("sum"); 0: off.
  double session_weight = 0.15;
  // A session's score, for the session ranking and the prior: session_mix x
  // its session BM25 (its episodes that match the query taken as one
  // document, core/rank/episode_context.h) over the best session's +
  // (1 - session_mix) x its best episode's own score.
  double session_mix = 0.5;
  // A record whose text is longer than this is indexed as passages of
  // about this many bytes (cut at sentence or word ends), one lexical
  // document each with its byte offsets, so that it ranks by its best
  // passage and a hit shows that passage (SearchHit::passage). 0: the
  // measured default (src/index/lexical/passages.h, bench/README.md).
  // Changing it rebuilds the lexical index on the next open.
  size_t passage_bytes = 0;
  // The most a hit shows of its record, in tokens (tokens.counter): a
  // longer passage or text is cut around where it matched. 0: no bound.
  int max_tokens_per_hit = 200;
  // What SearchHit::score means. "calibrated" (default): an estimate of the
  // chance that the hit is relevant, comparable across queries, from the
  // hit's score over the query's best and how much of the query the best
  // hit matches (the fitted curve: src/core/calibration.h; bench/README.md):
  // a query that nothing matches well scores low throughout, so min_score
  // 0.7 returns nothing for it. The order is the same as "relative": the
  // fused score over the query's best (1: the query's best hit).
  std::string scores = "calibrated";
};

struct FactOptions {
  double dedup_cosine = 0.95;            // above this a candidate merges
};

struct ConsolidationOptions {
  int every_n_episodes = 20;             // 0: only when asked / at session end
  ExtractorKind extractor = ExtractorKind::kRules;  // rules (built in) or llm (LlmOptions)
  // Consolidate on a background worker: AddEpisode and EndSession only queue
  // the session, so a write never waits for a model. Progress is stored with
  // the facts, so queued work interrupted by a restart is redone, never lost.
  bool background = false;
};

// The chat model (any OpenAI-compatible POST /chat/completions: Ollama,
// llama.cpp server, vLLM, OpenAI) used by consolidation.extractor = "llm".
struct LlmOptions {
  std::string base_url = "http://localhost:11434/v1";  // up to and including /v1
  std::string model;                     // required for the llm extractor
  // Bearer token; empty: none, or $OPENAI_API_KEY when base_url is
  // https://api.openai.com.
  std::string api_key;
  int timeout_ms = 120000;               // per request (connect and read)
  int max_retries = 3;                   // on 408, 429, 5xx, malformed replies, transport errors
  // How JSON replies are asked for: auto (json_schema, falling back to
  // json_object, then the prompt alone, when the server rejects it),
  // json_schema, json_object or prompt.
  std::string response_format = "auto";
};

// Mission retrieval (seed 003; docs/mission.md): degraded mode, escalation
// and the candidates of workflow_memory_query.
struct MissionOptions {
  // Degraded mode: mission events per minute (over rate_window_min) above
  // which ranking mixes in criticality: alpha = clamp((rate - capacity) /
  // capacity, 0, 1), score = alpha * criticality + (1 - alpha) * similarity.
  double capacity_events_per_min = 30.0;
  int rate_window_min = 5;
  // Escalation (handoff digest): a component escalates when its events in the
  // last escalation_window_min reach escalation_min_events and at least
  // escalation_factor times its events in the window before.
  int escalation_window_min = 60;
  double escalation_factor = 2.0;
  int escalation_min_events = 3;
  int query_candidates = 50;             // per layer, before the budget cut
  // Degraded mode by hand: "auto" (by the event rate, above), "degraded"
  // (always; alpha at least 0.5) or "normal" (never).
  std::string degraded_mode = "auto";
  // Digests serve no entry scoring below this (SearchHit::score scale): with
  // the default fusion a record that shares no word with the task scores at
  // most 0.09, unrelated ones about 0.01.
  double min_relevance = 0.03;
  // Entries of a kind that repeats (events, facts, chunks; not decisions,
  // principles or corrections) whose words overlap this much (Jaccard of
  // their word sets, numbers ignored) are collapsed into one with a count
  // and time span (1: only texts that differ in numbers alone).
  double near_duplicate = 0.9;
};

// Token counting (src/working/tokens.h): the one counter behind every
// budget and reported figure.
struct TokenOptions {
  // auto: exact cl100k_base counts when its vocabulary is found, else the
  // estimate; cl100k: exact, an error when the vocabulary is missing;
  // estimate: the built-in estimate.
  std::string counter = "auto";
  // js-tiktoken's dist/ranks/cl100k_base.js (or .cjs / .json); empty: looked
  // for where scripts/deps.sh installs it (data/tokenizer/node_modules).
  std::string vocabulary_path;
};

struct Options {
  StoreOptions store;
  EmbedderOptions embedder;
  WritePolicyOptions policy;
  RetrievalOptions retrieval;
  FactOptions facts;
  ConsolidationOptions consolidation;
  LlmOptions llm;
  MissionOptions mission;
  TokenOptions tokens;
  // The key for https://api.openai.com: the bearer token embedder.* and
  // llm.* send when their base_url is on api.openai.com and their api_key
  // is empty (never sent to another server). The msp programs fill it from
  // $OPENAI_API_KEY; the library reads no environment variable.
  std::string openai_api_key;
  std::string actor;                     // default caller identity for the audit log
};

}  // namespace msp

#endif  // MSP_OPTIONS_H_
