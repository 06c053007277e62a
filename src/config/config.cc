// The settings table and the loader that applies defaults, TOML, environment
// and flags in that order.
#include "config/config.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <variant>

#include <toml++/toml.h>

#include "util/utf8.h"

extern char** environ;

namespace msp {
namespace {

// Pointers to the Options field a setting fills; the alternative also gives
// the setting's type.
using Field = std::variant<std::string* (*)(Options&), int* (*)(Options&), size_t* (*)(Options&),
                           double* (*)(Options&), bool* (*)(Options&), std::vector<std::string>* (*)(Options&)>;

// A parsed value, before it is range-checked and stored.
using Value = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

struct Setting {
  SettingInfo info;
  Field field;
  // Numeric bounds, inclusive unless lo_open.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  // Strings: allowed values separated by '|' (empty: any), and whether "" is allowed.
  std::string_view choices;
  bool allow_empty = true;
};

SettingType TypeOf(const Field& f) {
  switch (f.index()) {
    case 0: return SettingType::kString;
    case 1: return SettingType::kInt;
    case 2: return SettingType::kSize;
    case 3: return SettingType::kDouble;
    case 4: return SettingType::kBool;
    default: return SettingType::kStringList;
  }
}

Setting Make(std::string_view key, std::string_view env, std::string_view flag, Field field,
             std::string_view description) {
  Setting s;
  s.info = SettingInfo{key, env, flag, TypeOf(field), description};
  s.field = field;
  return s;
}

Setting Range(Setting s, double lo, double hi, bool lo_open = false) {
  s.lo = lo;
  s.hi = hi;
  s.lo_open = lo_open;
  return s;
}

Setting NonEmpty(Setting s, std::string_view choices = {}) {
  s.allow_empty = false;
  s.choices = choices;
  return s;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// THE settings table: every setting msp reads, declared once.
const std::vector<Setting>& Table() {
  static const std::vector<Setting> table = {
      NonEmpty(Make("store.backend", "MSP_BACKEND", "--backend", +[](Options& o) { return &o.store.backend; },
                    "Store backend: sqlite (msp.db in data_dir) or postgres (store.postgres_url; several "
                    "msp servers may share it, docs/postgres.md)."),
               "sqlite|postgres"),
      NonEmpty(Make("store.data_dir", "MSP_DATA_DIR", "--data-dir", +[](Options& o) { return &o.store.data_dir; },
                    "Data directory: holds msp.db (the truth) and the derived indexes.")),
      NonEmpty(Make("store.data_dir_base", "MSP_DATA_DIR_BASE", "--data-dir-base",
                    +[](Options& o) { return &o.store.data_dir_base; },
                    "What a relative data_dir is relative to: current (the current directory) or repository "
                    "(the top of the git work tree holding the current directory; the current directory "
                    "outside one). `msp setup claude-code` uses repository."),
               "current|repository"),
      NonEmpty(Make("store.synchronous", "MSP_SYNCHRONOUS", "--synchronous",
                    +[](Options& o) { return &o.store.synchronous; },
                    "SQLite synchronous mode: full (survives power loss) or normal (survives a killed "
                    "process)."),
               "full|normal"),
      Range(Make("store.busy_timeout_ms", "MSP_BUSY_TIMEOUT_MS", "--busy-timeout-ms",
                 +[](Options& o) { return &o.store.busy_timeout_ms; },
                 "How long a writer waits for a lock held by another process, in ms (>= 0)."),
            0, kInf),
      Make("store.postgres_url", "MSP_POSTGRES_URL", "--postgres-url",
           +[](Options& o) { return &o.store.postgres_url; },
           "postgres: the database as a libpq connection string or URL (postgresql://msp@db1:5432/msp); "
           "empty: libpq's defaults ($PGHOST, $PGDATABASE, ...). Prefer the environment variable (or "
           "~/.pgpass) for a password."),
      NonEmpty(Make("store.postgres_schema", "MSP_POSTGRES_SCHEMA", "--postgres-schema",
                    +[](Options& o) { return &o.store.postgres_schema; },
                    "postgres: the schema holding msp's tables, created if missing (lower-case letters, "
                    "digits and _).")),
      Range(Make("store.postgres_pool_size", "MSP_POSTGRES_POOL_SIZE", "--postgres-pool-size",
                 +[](Options& o) { return &o.store.postgres_pool_size; },
                 "postgres: database connections per msp process (1..1000)."),
            1, 1000),
      Range(Make("store.postgres_connect_timeout_ms", "MSP_POSTGRES_CONNECT_TIMEOUT_MS",
                 "--postgres-connect-timeout-ms", +[](Options& o) { return &o.store.postgres_connect_timeout_ms; },
                 "postgres: how long to wait for a connection, new (libpq counts whole seconds, at least 2) "
                 "or from the pool, in ms."),
            0, kInf),
      Range(Make("store.postgres_statement_timeout_ms", "MSP_POSTGRES_STATEMENT_TIMEOUT_MS",
                 "--postgres-statement-timeout-ms",
                 +[](Options& o) { return &o.store.postgres_statement_timeout_ms; },
                 "postgres: longest a statement may run, in ms (0: no limit); a longer one fails as unavailable."),
            0, kInf),
      Make("store.encryption_key_file", "MSP_ENCRYPTION_KEY_FILE", "--encryption-key-file",
           +[](Options& o) { return &o.store.encryption_key_file; },
           "sqlite: encrypt msp.db at rest with the key in this file (64 hex digits, openssl rand -hex 32; "
           "mode 0600); the derived indexes are then kept in memory (docs/encryption.md)."),
      Make("store.encryption_key", "MSP_ENCRYPTION_KEY", "--encryption-key",
           +[](Options& o) { return &o.store.encryption_key; },
           "sqlite: the encryption key itself (64 hex digits); prefer the environment variable or "
           "store.encryption_key_file to a flag, which other users can see."),
      Range(Make("store.idempotency_ttl_hours", "MSP_IDEMPOTENCY_TTL_HOURS", "--idempotency-ttl-hours",
                 +[](Options& o) { return &o.store.idempotency_ttl_hours; },
                 "How long a write's idempotency key (--request-id, Idempotency-Key, request_id) is kept, in "
                 "hours (1..8760): a repeat within it answers the first result and writes nothing."),
            1, 8760),
      NonEmpty(Make("embedder.provider", "MSP_EMBEDDER", "--embedder",
                    +[](Options& o) { return &o.embedder.provider; },
                    "Embedder: hashing (built in, lexical, no model needed), static (built in, GloVe word "
                    "vectors, semantic, no model server; its table: `scripts/deps.sh --word-vectors`), openai "
                    "(any OpenAI-compatible POST /embeddings: Ollama, llama.cpp server, vLLM, TEI, OpenAI) or "
                    "native (a BERT-family sentence encoder such as all-MiniLM-L6-v2 run in-process from the "
                    "model directory embedder.model; docs/embeddings.md). "
                    "Changing it needs `msp reembed` on an existing store."),
               "hashing|static|openai|native"),
      Range(Make("embedder.dimension", "MSP_EMBEDDER_DIMENSION", "--embedder-dimension",
                 +[](Options& o) { return &o.embedder.dimension; },
                 "Embedding dimension (1..65536; hashing: 8..4096). For openai, the size of the model's vectors "
                 "(nomic-embed-text 768, text-embedding-3-small 1536); a reply of another size is an error."),
            1, 65536),
      Make("embedder.vectors_path", "MSP_EMBEDDER_VECTORS_PATH", "--embedder-vectors-path",
           +[](Options& o) { return &o.embedder.vectors_path; },
           "static: the word-vector table (empty: the one `scripts/deps.sh --word-vectors` makes, "
           "data/embeddings/glove-6b-100d.msv, else /usr/local/share/msp/ or /usr/share/msp/). Its rows set the "
           "dimension; embedder.dimension is not used."),
      Make("embedder.base_url", "MSP_EMBEDDER_BASE_URL", "--embedder-base-url",
           +[](Options& o) { return &o.embedder.base_url; },
           "openai: the server's URL up to and including /v1 (Ollama http://localhost:11434/v1, llama.cpp "
           "http://localhost:8080/v1, OpenAI https://api.openai.com/v1)."),
      Make("embedder.model", "MSP_EMBEDDER_MODEL", "--embedder-model",
           +[](Options& o) { return &o.embedder.model; },
           "openai: the embedding model (required), e.g. nomic-embed-text, text-embedding-3-small. native: the "
           "model directory (required): model.safetensors, config.json, vocab.txt or tokenizer.json, as a "
           "Hugging Face sentence-transformers repository has them (docs/embeddings.md)."),
      Make("embedder.api_key", "MSP_EMBEDDER_API_KEY", "--embedder-api-key",
           +[](Options& o) { return &o.embedder.api_key; },
           "openai: bearer token (empty: none; with base_url on https://api.openai.com, $OPENAI_API_KEY). "
           "Prefer the environment variable to the file or the flag."),
      Range(Make("embedder.batch_size", "MSP_EMBEDDER_BATCH_SIZE", "--embedder-batch-size",
                 +[](Options& o) { return &o.embedder.batch_size; },
                 "openai: texts per request (1..2048); also the records per batch of `msp reembed`."),
            1, 2048),
      Range(Make("embedder.timeout_ms", "MSP_EMBEDDER_TIMEOUT_MS", "--embedder-timeout-ms",
                 +[](Options& o) { return &o.embedder.timeout_ms; },
                 "openai: connect and read timeout of one request, in ms (>= 1)."),
            1, kInf),
      Range(Make("embedder.max_retries", "MSP_EMBEDDER_MAX_RETRIES", "--embedder-max-retries",
                 +[](Options& o) { return &o.embedder.max_retries; },
                 "openai: retries after a 408, 429, 5xx, malformed reply or network error, with exponential "
                 "backoff (0..20)."),
            0, 20),
      Range(Make("embedder.threads", "MSP_EMBEDDER_THREADS", "--embedder-threads",
                 +[](Options& o) { return &o.embedder.threads; },
                 "native: threads one embedding call uses, its texts split between them (0: one per core, at "
                 "most 8; 0..256)."),
            0, 256),
      NonEmpty(Make("embedder.pooling", "MSP_EMBEDDER_POOLING", "--embedder-pooling",
                    +[](Options& o) { return &o.embedder.pooling; },
                    "native: how token vectors become the text's vector: auto (the model's "
                    "1_Pooling/config.json, else mean), mean (all-MiniLM, e5, gte) or cls (bge). Part of the "
                    "embedder's identity."),
               "auto|mean|cls"),
      Make("policy.min_chars", "MSP_POLICY_MIN_CHARS", "--policy-min-chars",
           +[](Options& o) { return &o.policy.min_chars; },
           "Writes with shorter text are refused (0: rule off)."),
      Make("policy.trivial_phrases", "MSP_POLICY_TRIVIAL_PHRASES", "--policy-trivial-phrases",
           +[](Options& o) { return &o.policy.trivial_phrases; },
           "Acknowledgements refused as trivial, per language (whole text; case folded for Latin, Greek and "
           "Cyrillic; trailing punctuation ignored). Add your languages' to the list."),
      Make("policy.refuse_high_sensitivity", "MSP_POLICY_REFUSE_HIGH_SENSITIVITY",
           "--policy-refuse-high-sensitivity", +[](Options& o) { return &o.policy.refuse_high_sensitivity; },
           "Refuse records of sensitivity high."),
      Make("policy.trusted_sources", "MSP_POLICY_TRUSTED_SOURCES", "--policy-trusted-sources",
           +[](Options& o) { return &o.policy.trusted_sources; },
           "Sources a general write is accepted from (empty: any)."),
      Make("policy.context_trusted_sources", "MSP_POLICY_CONTEXT_TRUSTED_SOURCES",
           "--policy-context-trusted-sources", +[](Options& o) { return &o.policy.context_trusted_sources; },
           "Sources whose records are labelled trusted where stored text reaches a model (working memory, "
           "digests, MCP results); records of every other source are labelled untrusted (docs/access.md)."),
      Make("policy.stable_tags", "MSP_POLICY_STABLE_TAGS", "--policy-stable-tags",
           +[](Options& o) { return &o.policy.stable_tags; },
           "Tags of which a general write must carry one when require_stable_tag is on."),
      Make("policy.require_stable_tag", "MSP_POLICY_REQUIRE_STABLE_TAG", "--policy-require-stable-tag",
           +[](Options& o) { return &o.policy.require_stable_tag; },
           "Refuse general writes without one of stable_tags."),
      Range(Make("policy.ttl_min_days", "MSP_POLICY_TTL_MIN_DAYS", "--policy-ttl-min-days",
                 +[](Options& o) { return &o.policy.ttl_min_days; },
                 "Smallest TTL a write may ask for, in days (1..36500, <= ttl_max_days)."),
            1, 36500),
      Range(Make("policy.ttl_max_days", "MSP_POLICY_TTL_MAX_DAYS", "--policy-ttl-max-days",
                 +[](Options& o) { return &o.policy.ttl_max_days; },
                 "Largest TTL a write may ask for, in days (1..36500, >= ttl_min_days)."),
            1, 36500),
      Range(Make("policy.default_ttl_days", "MSP_POLICY_DEFAULT_TTL_DAYS", "--policy-default-ttl-days",
                 +[](Options& o) { return &o.policy.default_ttl_days; },
                 "TTL of writes that do not ask for one (0: never expire; else within the TTL bounds)."),
            0, 36500),
      Make("policy.max_items_per_user", "MSP_POLICY_MAX_ITEMS_PER_USER", "--policy-max-items-per-user",
           +[](Options& o) { return &o.policy.max_items_per_user; },
           "Facts kept per (tenant, user); past it the least valuable are evicted (0: no limit)."),
      Range(Make("policy.max_text_bytes", "MSP_POLICY_MAX_TEXT_BYTES", "--policy-max-text-bytes",
                 +[](Options& o) { return &o.policy.max_text_bytes; },
                 "Largest text of a write (fact, decision, document...), in bytes (>= 1); episodes and imported "
                 "records: policy.max_record_bytes."),
            1, kInf),
      Range(Make("policy.max_record_bytes", "MSP_POLICY_MAX_RECORD_BYTES", "--policy-max-record-bytes",
                 +[](Options& o) { return &o.policy.max_record_bytes; },
                 "Largest text of an episode or an imported record, in bytes (>= 1): stored whole, a long one "
                 "indexed as passages (retrieval.passage_bytes); over it an import does as policy.on_oversize says."),
            1, kInf),
      NonEmpty(Make("policy.on_oversize", "MSP_POLICY_ON_OVERSIZE", "--policy-on-oversize",
                    +[](Options& o) { return &o.policy.on_oversize; },
                    "An imported record over policy.max_record_bytes: refuse (the import fails), split (stored as "
                    "consecutive records, provenance split_from) or truncate. msp import --on-oversize."),
               "refuse|split|truncate"),
      NonEmpty(Make("retrieval.fusion", "MSP_RETRIEVAL_FUSION", "--retrieval-fusion",
                    +[](Options& o) { return &o.retrieval.fusion; },
                    "How the lexical and vector signals are fused: score (weighted mean of their scores on [0, 1]) "
                    "or rrf (weighted reciprocal-rank fusion, retrieval.rrf_k)."),
               "score|rrf"),
      Range(Make("retrieval.rrf_k", "MSP_RETRIEVAL_RRF_K", "--retrieval-rrf-k",
                 +[](Options& o) { return &o.retrieval.rrf_k; },
                 "Reciprocal-rank fusion constant k (> 0)."),
            1, kInf),
      Range(Make("retrieval.lexical_weight", "MSP_RETRIEVAL_LEXICAL_WEIGHT", "--retrieval-lexical-weight",
                 +[](Options& o) { return &o.retrieval.lexical_weight; },
                 "Weight of the BM25 signal in fusion (>= 0)."),
            0, kInf),
      Range(Make("retrieval.vector_weight", "MSP_RETRIEVAL_VECTOR_WEIGHT", "--retrieval-vector-weight",
                 +[](Options& o) { return &o.retrieval.vector_weight; },
                 "Weight of the cosine signal in fusion (>= 0; the two weights may not both be 0)."),
            0, kInf),
      Range(Make("retrieval.candidates", "MSP_RETRIEVAL_CANDIDATES", "--retrieval-candidates",
                 +[](Options& o) { return &o.retrieval.candidates; },
                 "Candidates taken from each signal before fusion (>= 1)."),
            1, kInf),
      Range(Make("retrieval.vector_candidates", "MSP_RETRIEVAL_VECTOR_CANDIDATES", "--retrieval-vector-candidates",
                 +[](Options& o) { return &o.retrieval.vector_candidates; },
                 "Candidates taken from the vector signal (>= 0; 0: retrieval.candidates)."),
            0, kInf),
      Range(Make("retrieval.vector_min_cosine", "MSP_RETRIEVAL_VECTOR_MIN_COSINE", "--retrieval-vector-min-cosine",
                 +[](Options& o) { return &o.retrieval.vector_min_cosine; },
                 "The vector signal ignores records below this cosine (-1..1)."),
            -1, 1),
      NonEmpty(Make("retrieval.language", "MSP_RETRIEVAL_LANGUAGE", "--retrieval-language",
                    +[](Options& o) { return &o.retrieval.language; },
                    "Language of the stemmer and stop words (a Snowball name: english, russian, ...).")),
      Range(Make("retrieval.bm25_k1", "MSP_RETRIEVAL_BM25_K1", "--retrieval-bm25-k1",
                 +[](Options& o) { return &o.retrieval.bm25_k1; },
                 "BM25 term-frequency saturation of the lexical index (>= 0)."),
            0, kInf),
      Range(Make("retrieval.bm25_b", "MSP_RETRIEVAL_BM25_B", "--retrieval-bm25-b",
                 +[](Options& o) { return &o.retrieval.bm25_b; },
                 "BM25 length normalisation of the lexical index (0..1)."),
            0, 1),
      Make("retrieval.date_terms", "MSP_RETRIEVAL_DATE_TERMS", "--retrieval-date-terms",
           +[](Options& o) { return &o.retrieval.date_terms; },
           "Index each record's month and year (of created_at) as words; changing it rebuilds the lexical index."),
      NonEmpty(Make("retrieval.context", "MSP_RETRIEVAL_CONTEXT", "--retrieval-context",
                    +[](Options& o) { return &o.retrieval.context; },
                    "How an episode's own match and its context combine: prior (its own match and its best "
                    "neighbours' discounted, as independent evidence (noisy-or), plus session_weight / (1 + its "
                    "session's rank)) or sum (own + neighbours + session boost, issue 3's ranking)."),
               "prior|sum"),
      Range(Make("retrieval.neighbour_weight_1", "MSP_RETRIEVAL_NEIGHBOUR_WEIGHT_1", "--retrieval-neighbour-weight-1",
                 +[](Options& o) { return &o.retrieval.neighbour_weight_1; },
                 "Share of the score of the episodes one step before and after that an episode may borrow "
                 "(prior: the better of the two; sum: both added) (>= 0)."),
            0, kInf),
      Range(Make("retrieval.neighbour_weight_2", "MSP_RETRIEVAL_NEIGHBOUR_WEIGHT_2", "--retrieval-neighbour-weight-2",
                 +[](Options& o) { return &o.retrieval.neighbour_weight_2; },
                 "Share of the score of the episodes two steps before and after that an episode may borrow "
                 "(prior: the better of the two; sum: both added) (>= 0)."),
            0, kInf),
      Range(Make("retrieval.context_sessions", "MSP_RETRIEVAL_CONTEXT_SESSIONS", "--retrieval-context-sessions",
                 +[](Options& o) { return &o.retrieval.context_sessions; },
                 "This many sessions, those that match the query best as wholes (session BM25), have all their "
                 "episodes scored with their neighbours (>= 0; 0: BM25 hits only)."),
            0, 1000),
      Range(Make("retrieval.session_weight", "MSP_RETRIEVAL_SESSION_WEIGHT", "--retrieval-session-weight",
                 +[](Options& o) { return &o.retrieval.session_weight; },
                 "Session prior of an episode: prior, session_weight / (1 + its session's rank among the query's "
                 "sessions); sum, session_weight x its session's match (>= 0; 0: off)."),
            0, kInf),
      Range(Make("retrieval.session_mix", "MSP_RETRIEVAL_SESSION_MIX", "--retrieval-session-mix",
                 +[](Options& o) { return &o.retrieval.session_mix; },
                 "Session match = mix x session BM25 (its matching episodes as one document, relative) + "
                 "(1 - mix) x best episode score (0..1)."),
            0, 1),
      Range(Make("retrieval.passage_bytes", "MSP_RETRIEVAL_PASSAGE_BYTES", "--retrieval-passage-bytes",
                 +[](Options& o) { return &o.retrieval.passage_bytes; },
                 "A record longer than this is indexed as passages of about this many bytes, and its hit shows "
                 "the passage that matched (0: the measured default, 256; changing it rebuilds the lexical index)."),
            0, 1048576),
      Range(Make("retrieval.max_tokens_per_hit", "MSP_RETRIEVAL_MAX_TOKENS_PER_HIT", "--retrieval-max-tokens-per-hit",
                 +[](Options& o) { return &o.retrieval.max_tokens_per_hit; },
                 "The most a hit shows of its record, in tokens (tokens.counter); a longer passage or text is cut "
                 "(0: no bound)."),
            0, 1000000),
      NonEmpty(Make("retrieval.scores", "MSP_RETRIEVAL_SCORES", "--retrieval-scores",
                    +[](Options& o) { return &o.retrieval.scores; },
                    "What a hit's score means: calibrated (an estimate of the chance it is relevant, comparable "
                    "across queries, so min_score 0.7 drops a query that nothing matches well) or relative (over "
                    "the query's best hit). The order is the same."),
               "calibrated|relative"),
      Range(Make("facts.dedup_cosine", "MSP_FACTS_DEDUP_COSINE", "--facts-dedup-cosine",
                 +[](Options& o) { return &o.facts.dedup_cosine; },
                 "A new fact above this cosine to an active fact merges into it (in (0, 1])."),
            0, 1, /*lo_open=*/true),
      Range(Make("consolidation.every_n_episodes", "MSP_CONSOLIDATION_EVERY_N_EPISODES",
                 "--consolidation-every-n-episodes", +[](Options& o) { return &o.consolidation.every_n_episodes; },
                 "Consolidate a session after this many new episodes (0: only when asked or at session "
                 "end)."),
            0, kInf),
      NonEmpty(Make("consolidation.extractor", "MSP_CONSOLIDATION_EXTRACTOR", "--consolidation-extractor",
                    +[](Options& o) { return &o.consolidation.extractor; },
                    "Fact extractor: rules (built in, no model) or llm (a chat model, llm.*: facts with "
                    "confidence, merged into their twin or superseding what they contradict)."),
               "rules|llm"),
      Make("consolidation.background", "MSP_CONSOLIDATION_BACKGROUND", "--consolidation-background",
           +[](Options& o) { return &o.consolidation.background; },
           "Consolidate on a background worker: episode add and session end only queue the session, so a "
           "write never waits for a model (the queue is kept in the store across restarts)."),
      Make("llm.base_url", "MSP_LLM_BASE_URL", "--llm-base-url", +[](Options& o) { return &o.llm.base_url; },
           "Chat model server for the llm extractor, up to and including /v1 (Ollama "
           "http://localhost:11434/v1, llama.cpp http://localhost:8080/v1, OpenAI https://api.openai.com/v1)."),
      Make("llm.model", "MSP_LLM_MODEL", "--llm-model", +[](Options& o) { return &o.llm.model; },
           "Chat model for the llm extractor (required for it), e.g. llama3.1, qwen2.5:7b, gpt-4o-mini."),
      Make("llm.api_key", "MSP_LLM_API_KEY", "--llm-api-key", +[](Options& o) { return &o.llm.api_key; },
           "Bearer token of the chat server (empty: none; with base_url on https://api.openai.com, "
           "$OPENAI_API_KEY). Prefer the environment variable to the file or the flag."),
      Range(Make("llm.timeout_ms", "MSP_LLM_TIMEOUT_MS", "--llm-timeout-ms",
                 +[](Options& o) { return &o.llm.timeout_ms; },
                 "Connect and read timeout of one chat request, in ms (>= 1)."),
            1, kInf),
      Range(Make("llm.max_retries", "MSP_LLM_MAX_RETRIES", "--llm-max-retries",
                 +[](Options& o) { return &o.llm.max_retries; },
                 "Retries of a chat request after a 408, 429, 5xx, malformed reply or network error, with "
                 "exponential backoff and jitter, honouring Retry-After (0..20)."),
            0, 20),
      NonEmpty(Make("llm.response_format", "MSP_LLM_RESPONSE_FORMAT", "--llm-response-format",
                    +[](Options& o) { return &o.llm.response_format; },
                    "How JSON replies are asked for: auto (json_schema; on a 400 rejecting it, json_object, then "
                    "the prompt alone), json_schema, json_object or prompt. Replies are always checked "
                    "against the schema."),
               "auto|json_schema|json_object|prompt"),
      NonEmpty(Make("server.bind", "MSP_SERVER_BIND", "--bind", +[](Options& o) { return &o.server.bind; },
                    "Address `msp serve` listens on (127.0.0.1: this machine only; 0.0.0.0: every interface).")),
      Range(Make("server.port", "MSP_SERVER_PORT", "--port", +[](Options& o) { return &o.server.port; },
                 "TCP port of `msp serve` (0..65535; 0: any free port, printed at start)."),
            0, 65535),
      Range(Make("server.threads", "MSP_SERVER_THREADS", "--server-threads",
                 +[](Options& o) { return &o.server.threads; },
                 "Worker threads answering HTTP requests (0..1024; 0: max(32, 8 x the CPU threads))."),
            0, 1024),
      Range(Make("server.max_body_bytes", "MSP_SERVER_MAX_BODY_BYTES", "--server-max-body-bytes",
                 +[](Options& o) { return &o.server.max_body_bytes; },
                 "Largest HTTP request body in bytes; larger ones get 413 (>= 1024)."),
            1024, kInf),
      Make("server.api_keys", "MSP_API_KEYS", "--api-keys", +[](Options& o) { return &o.server.api_keys; },
           "API keys as KEY=TENANT or KEY=TENANT:CLEARANCE entries (a key reads and writes only its tenant and, "
           "with a clearance 0..9, is served only records at or below it; no clearance: no limit; keys of 16+ "
           "characters)."),
      Make("server.api_keys_file", "MSP_API_KEYS_FILE", "--api-keys-file",
           +[](Options& o) { return &o.server.api_keys_file; },
           "File of API keys, one \"KEY TENANT\" or \"KEY TENANT CLEARANCE\" a line (# starts a comment)."),
      Make("server.allow_anonymous", "MSP_SERVER_ALLOW_ANONYMOUS", "--allow-anonymous",
           +[](Options& o) { return &o.server.allow_anonymous; },
           "With no API keys configured, serve every request as tenant default (loopback bind only)."),
      Make("server.access_log", "MSP_SERVER_ACCESS_LOG", "--access-log",
           +[](Options& o) { return &o.server.access_log; },
           "Log each HTTP request as one JSON line on stderr."),
      Range(Make("server.stats_cache_ms", "MSP_SERVER_STATS_CACHE_MS", "--server-stats-cache-ms",
                 +[](Options& o) { return &o.server.stats_cache_ms; },
                 "How long /metrics reuses record counts, in ms (0..3600000)."),
            0, 3600000),
      Range(Make("server.header_timeout_ms", "MSP_SERVER_HEADER_TIMEOUT_MS", "--server-header-timeout-ms",
                 +[](Options& o) { return &o.server.header_timeout_ms; },
                 "A request's line and headers must arrive within this many ms (of connecting, or of the first "
                 "byte on a kept-alive connection); later: 408 and the connection is closed (100..600000)."),
            100, 600000),
      Range(Make("server.body_timeout_ms", "MSP_SERVER_BODY_TIMEOUT_MS", "--server-body-timeout-ms",
                 +[](Options& o) { return &o.server.body_timeout_ms; },
                 "A request's body (its whole Content-Length) must arrive within this many ms of its headers; "
                 "later: 408, nothing done, the connection closed (100..3600000)."),
            100, 3600000),
      Range(Make("server.max_connections", "MSP_SERVER_MAX_CONNECTIONS", "--server-max-connections",
                 +[](Options& o) { return &o.server.max_connections; },
                 "Open HTTP connections at most; a new one past it closes the oldest that is not being answered "
                 "(503), or gets 503 itself (1..100000)."),
            1, 100000),
      Range(Make("server.max_connections_per_client", "MSP_SERVER_MAX_CONNECTIONS_PER_CLIENT",
                 "--server-max-connections-per-client",
                 +[](Options& o) { return &o.server.max_connections_per_client; },
                 "Open HTTP connections from one address at most, handled as server.max_connections (1..100000; "
                 "raise it behind a proxy, whose connections share its address)."),
            1, 100000),
      Range(Make("server.max_queued_requests", "MSP_SERVER_MAX_QUEUED_REQUESTS", "--server-max-queued-requests",
                 +[](Options& o) { return &o.server.max_queued_requests; },
                 "Complete requests waiting for a worker thread at most; past it a request gets 503 with "
                 "Retry-After (1..100000)."),
            1, 100000),
      Make("server.allowed_hosts", "MSP_SERVER_ALLOWED_HOSTS", "--server-allowed-hosts",
           +[](Options& o) { return &o.server.allowed_hosts; },
           "Host names (memory.example.com) requests may name besides the bind address (and localhost when it is "
           "loopback, any IP when it is 0.0.0.0); other Host headers get 403 (against DNS rebinding)."),
      Make("server.allowed_origins", "MSP_SERVER_ALLOWED_ORIGINS", "--server-allowed-origins",
           +[](Options& o) { return &o.server.allowed_origins; },
           "Origins (https://app.example.com) the REST routes accept besides loopback ones; other Origin headers "
           "get 403 (against cross-site requests). /mcp has mcp.allowed_origins."),
      Range(Make("mission.capacity_events_per_min", "MSP_MISSION_CAPACITY_EVENTS_PER_MIN",
                 "--mission-capacity-events-per-min", +[](Options& o) { return &o.mission.capacity_events_per_min; },
                 "Degraded mode: mission events per minute above which a query ranks by alpha x criticality + "
                 "(1 - alpha) x similarity, alpha = clamp((rate - capacity) / capacity, 0, 1) (>= 0; 0: off)."),
            0, kInf),
      Range(Make("mission.rate_window_min", "MSP_MISSION_RATE_WINDOW_MIN", "--mission-rate-window-min",
                 +[](Options& o) { return &o.mission.rate_window_min; },
                 "Degraded mode: the event rate is counted over this many minutes up to now (1..1440)."),
            1, 1440),
      Range(Make("mission.escalation_window_min", "MSP_MISSION_ESCALATION_WINDOW_MIN",
                 "--mission-escalation-window-min", +[](Options& o) { return &o.mission.escalation_window_min; },
                 "Handoff: a component's events in the last this-many minutes are compared with the window "
                 "before (1..10080)."),
            1, 10080),
      Range(Make("mission.escalation_factor", "MSP_MISSION_ESCALATION_FACTOR", "--mission-escalation-factor",
                 +[](Options& o) { return &o.mission.escalation_factor; },
                 "Handoff: a component escalates when its recent events are at least this many times the "
                 "earlier ones (>= 1)."),
            1, kInf),
      Range(Make("mission.escalation_min_events", "MSP_MISSION_ESCALATION_MIN_EVENTS",
                 "--mission-escalation-min-events", +[](Options& o) { return &o.mission.escalation_min_events; },
                 "Handoff: and at least this many recent events (>= 1)."),
            1, kInf),
      Range(Make("mission.query_candidates", "MSP_MISSION_QUERY_CANDIDATES", "--mission-query-candidates",
                 +[](Options& o) { return &o.mission.query_candidates; },
                 "workflow_memory_query: candidates taken from each layer before the budget cut (1..1000)."),
            1, 1000),
      NonEmpty(Make("mission.degraded_mode", "MSP_MISSION_DEGRADED_MODE", "--mission-degraded-mode",
                    +[](Options& o) { return &o.mission.degraded_mode; },
                    "Degraded mode: auto (by the event rate), degraded (always; alpha at least 0.5) or normal "
                    "(never).")),
      Range(Make("mission.min_relevance", "MSP_MISSION_MIN_RELEVANCE", "--mission-min-relevance",
                 +[](Options& o) { return &o.mission.min_relevance; },
                 "Digests (query, handoff) serve no entry scoring below this (0..1; a record sharing no word with "
                 "the task scores at most 0.09, an unrelated one about 0.01)."),
            0, 1),
      Range(Make("mission.near_duplicate", "MSP_MISSION_NEAR_DUPLICATE", "--mission-near-duplicate",
                 +[](Options& o) { return &o.mission.near_duplicate; },
                 "Digest entries of a repeating kind (events, facts, chunks; not decisions) whose word sets overlap "
                 "at least this much (Jaccard, numbers ignored, 0.5..1) collapse into one entry with a count and "
                 "time span."),
            0.5, 1),
      Make("mcp.allowed_origins", "MSP_MCP_ALLOWED_ORIGINS", "--mcp-allowed-origins",
           +[](Options& o) { return &o.mcp.allowed_origins; },
           "Origins (https://app.example.com) that /mcp accepts besides loopback ones; other Origin headers get "
           "403."),
      Range(Make("mcp.read_graph_page_size", "MSP_MCP_READ_GRAPH_PAGE_SIZE", "--mcp-read-graph-page-size",
                 +[](Options& o) { return &o.mcp.read_graph_page_size; },
                 "MCP read_graph: entities and relations per page when the call gives no limit (1..1000)."),
            1, 1000),
      Range(Make("mcp.search_nodes_limit", "MSP_MCP_SEARCH_NODES_LIMIT", "--mcp-search-nodes-limit",
                 +[](Options& o) { return &o.mcp.search_nodes_limit; },
                 "MCP search_nodes: entities returned when the call gives no limit (1..1000)."),
            1, 1000),
      Range(Make("mcp.search_nodes_min_score", "MSP_MCP_SEARCH_NODES_MIN_SCORE", "--mcp-search-nodes-min-score",
                 +[](Options& o) { return &o.mcp.search_nodes_min_score; },
                 "MCP search_nodes: ranked hits below this score are dropped (0..1; 0.1 drops hits found only "
                 "by the vector signal at the default weights)."),
            0, 1),
      NonEmpty(Make("mcp.tools", "MSP_MCP_TOOLS", "--mcp-tools", +[](Options& o) { return &o.mcp.tools; },
                    "The tools MCP clients are offered: core (memory_write, memory_search, episode_add, "
                    "fact_history), mission (core and the mission tools), graph (core and the knowledge-graph "
                    "tools) or all."),
               "core|mission|graph|all"),
      NonEmpty(Make("mcp.write_source", "MSP_MCP_WRITE_SOURCE", "--mcp-write-source",
                    +[](Options& o) { return &o.mcp.write_source; },
                    "The source of an MCP memory_write that names none (agent: labelled untrusted where it "
                    "reaches a model, policy.context_trusted_sources).")),
      Make("mcp.write_default_tag", "MSP_MCP_WRITE_DEFAULT_TAG", "--mcp-write-default-tag",
           +[](Options& o) { return &o.mcp.write_default_tag; },
           "The tag an MCP memory_write carrying none of policy.stable_tags gets (empty: none; the write is then "
           "refused by policy.require_stable_tag)."),
      NonEmpty(Make("tokens.counter", "MSP_TOKENS_COUNTER", "--tokens-counter",
                    +[](Options& o) { return &o.tokens.counter; },
                    "Token counter of every budget: auto (cl100k when its vocabulary is found, else estimate), "
                    "cl100k (exact; an error without the vocabulary) or estimate."),
               "auto|cl100k|estimate"),
      Make("tokens.vocabulary_path", "MSP_TOKENS_VOCABULARY_PATH", "--tokens-vocabulary-path",
           +[](Options& o) { return &o.tokens.vocabulary_path; },
           "js-tiktoken's dist/ranks/cl100k_base.js (empty: where scripts/deps.sh installs it)."),
      // Document ingestion (docs/ingest.md).
      Range(Make("ingest.chunk_tokens", "MSP_INGEST_CHUNK_TOKENS", "--ingest-chunk-tokens",
                 +[](Options& o) { return &o.ingest.chunk_tokens; },
                 "`msp ingest`: at most this many tokens (tokens.counter) per document chunk (64..8192)."),
            64, 8192),
      Range(Make("ingest.overlap_tokens", "MSP_INGEST_OVERLAP_TOKENS", "--ingest-overlap-tokens",
                 +[](Options& o) { return &o.ingest.overlap_tokens; },
                 "`msp ingest`: tokens a chunk repeats from the end of the previous one (0..4095; less than half "
                 "of ingest.chunk_tokens)."),
            0, 4095),
      Range(Make("ingest.max_file_bytes", "MSP_INGEST_MAX_FILE_BYTES", "--ingest-max-file-bytes",
                 +[](Options& o) { return &o.ingest.max_file_bytes; },
                 "`msp ingest`: larger files are reported as failed and skipped (1..4294967296)."),
            1, 4294967296.0),
      Range(Make("agent.context_tokens", "MSP_AGENT_CONTEXT_TOKENS", "--agent-context-tokens",
                 +[](Options& o) { return &o.agent.context_tokens; },
                 "The chat model's context window in tokens (256..10000000)."),
            256, 10000000),
      Range(Make("agent.reply_reserve", "MSP_AGENT_REPLY_RESERVE", "--agent-reply-reserve",
                 +[](Options& o) { return &o.agent.reply_reserve; },
                 "Tokens kept free for the model's reply; the working memory gets context_tokens minus this (>= 0)."),
            0, 10000000),
      Range(Make("agent.recent_steps", "MSP_AGENT_RECENT_STEPS", "--agent-recent-steps",
                 +[](Options& o) { return &o.agent.recent_steps; },
                 "K: the last K steps of the session in the working memory (0..1000)."),
            0, 1000),
      Range(Make("agent.top_facts", "MSP_AGENT_TOP_FACTS", "--agent-top-facts",
                 +[](Options& o) { return &o.agent.top_facts; },
                 "M: facts retrieved for the request (0..1000)."),
            0, 1000),
      Range(Make("agent.retrieved_episodes", "MSP_AGENT_RETRIEVED_EPISODES", "--agent-retrieved-episodes",
                 +[](Options& o) { return &o.agent.retrieved_episodes; },
                 "Older episodes retrieved for the request (0..1000)."),
            0, 1000),
      Range(Make("agent.min_score", "MSP_AGENT_MIN_SCORE", "--agent-min-score",
                 +[](Options& o) { return &o.agent.min_score; },
                 "Retrieved facts and episodes below this score are left out (0..1)."),
            0, 1),
      Make("agent.summarise", "MSP_AGENT_SUMMARISE", "--agent-summarise",
           +[](Options& o) { return &o.agent.summarise; },
           "Over budget, summarise the oldest history with the model instead of only dropping it."),
      Range(Make("agent.max_tool_rounds", "MSP_AGENT_MAX_TOOL_ROUNDS", "--agent-max-tool-rounds",
                 +[](Options& o) { return &o.agent.max_tool_rounds; },
                 "Model calls in one turn before the turn stops without an answer (1..100)."),
            1, 100),
      Range(Make("agent.consolidate_every_steps", "MSP_AGENT_CONSOLIDATE_EVERY_STEPS",
                 "--agent-consolidate-every-steps", +[](Options& o) { return &o.agent.consolidate_every_steps; },
                 "Consolidate the session after this many steps (0: only at session end)."),
            0, 1000000),
      Make("agent.mcp_servers", "MSP_AGENT_MCP_SERVERS", "--agent-mcp-servers",
           +[](Options& o) { return &o.agent.mcp_servers; },
           "External MCP servers over stdio whose tools the agent gets, each NAME=COMMAND [ARG ...]; tools are "
           "named NAME__TOOL."),
      Range(Make("agent.mcp_timeout_ms", "MSP_AGENT_MCP_TIMEOUT_MS", "--agent-mcp-timeout-ms",
                 +[](Options& o) { return &o.agent.mcp_timeout_ms; },
                 "How long one MCP request may take, in ms (1..3600000)."),
            1, 3600000),
      Range(Make("agent.core_block_limit", "MSP_AGENT_CORE_BLOCK_LIMIT", "--agent-core-block-limit",
                 +[](Options& o) { return &o.agent.core_block_limit; },
                 "Limit in characters of a core memory block created without one (1..100000)."),
            1, 100000),
      // Coding agents (docs/coding-agents.md).
      Make("capture.repository", "MSP_CAPTURE_REPOSITORY", "--capture-repository",
           +[](Options& o) { return &o.coding.capture_repository; },
           "The bare git repository `msp capture` stores prompts in (one orphan commit each); empty: "
           "<data_dir>/prompts.git."),
      NonEmpty(Make("capture.mode", "MSP_CAPTURE_MODE", "--capture-mode",
                    +[](Options& o) { return &o.coding.capture_mode; },
                    "spool: the hook writes the prompt to the repository's spool and a detached `msp prompts "
                    "import` commits it (fast); direct: the hook commits it itself."),
               "spool|direct"),
      Make("capture.log_file", "MSP_CAPTURE_LOG_FILE", "--capture-log-file",
           +[](Options& o) { return &o.coding.capture_log; },
           "Where `msp capture` and the hooks log what went wrong (they never fail the agent); empty: "
           "<data_dir>/capture.log."),
      Range(Make("hooks.session_start_budget", "MSP_HOOKS_SESSION_START_BUDGET", "--hooks-session-start-budget",
                 +[](Options& o) { return &o.coding.session_start_budget; },
                 "Tokens of the digest `msp hook session-start` prints (0..1000000)."),
            0, 1000000),
      Make("hooks.post_tool_use", "MSP_HOOKS_POST_TOOL_USE", "--hooks-post-tool-use",
           +[](Options& o) { return &o.coding.post_tool_use; },
           "Set to false to stop the PostToolUse hooks (msp-capture, `msp hook post-tool-use`) recording tool "
           "observations; left unset, registering the hook is what turns them on."),
      Range(Make("hooks.tool_max_chars", "MSP_HOOKS_TOOL_MAX_CHARS", "--hooks-tool-max-chars",
                 +[](Options& o) { return &o.coding.tool_max_chars; },
                 "Characters kept of a recorded tool call's input and of its response (100..100000)."),
            100, 100000),
      NonEmpty(Make("prompts.classifier", "MSP_PROMPTS_CLASSIFIER", "--prompts-classifier",
                    +[](Options& o) { return &o.coding.classifier; },
                    "Intent labels of `msp prompts`: rules (built in), llm (the llm.* chat model) or auto (llm "
                    "when llm.model is set)."),
               "rules|llm|auto"),
      // The push-refresh orchestrator (docs/orchestrate.md).
      Range(Make("orchestrate.interval_s", "MSP_ORCHESTRATE_INTERVAL_S", "--orchestrate-interval-s",
                 +[](Options& o) { return &o.orchestrate.interval_s; },
                 "`msp orchestrate`: seconds between passes (1..604800)."),
            1, 604800),
      Range(Make("orchestrate.commit_weight", "MSP_ORCHESTRATE_COMMIT_WEIGHT", "--orchestrate-commit-weight",
                 +[](Options& o) { return &o.orchestrate.commit_weight; },
                 "Refresh priority added per commit touching the task since its last refresh (>= 0)."),
            0, kInf),
      Range(Make("orchestrate.comment_weight", "MSP_ORCHESTRATE_COMMENT_WEIGHT", "--orchestrate-comment-weight",
                 +[](Options& o) { return &o.orchestrate.comment_weight; },
                 "Refresh priority added per comment on the task since its last refresh (>= 0)."),
            0, kInf),
      Range(Make("orchestrate.pull_weight_per_day", "MSP_ORCHESTRATE_PULL_WEIGHT_PER_DAY",
                 "--orchestrate-pull-weight-per-day", +[](Options& o) { return &o.orchestrate.pull_weight_per_day; },
                 "Refresh priority added per day since the task's last pull (>= 0)."),
            0, kInf),
      Range(Make("orchestrate.threshold", "MSP_ORCHESTRATE_THRESHOLD", "--orchestrate-threshold",
                 +[](Options& o) { return &o.orchestrate.threshold; },
                 "A task is due at this priority, between the clamps (> 0)."),
            0, kInf, /*lo_open=*/true),
      Range(Make("orchestrate.min_interval_h", "MSP_ORCHESTRATE_MIN_INTERVAL_H", "--orchestrate-min-interval-h",
                 +[](Options& o) { return &o.orchestrate.min_interval_h; },
                 "A task is refreshed at most once in this many hours (24..168 as seed 003 clamps it; 1..8760 "
                 "with orchestrate.interval_override)."),
            1, 8760),
      Range(Make("orchestrate.max_interval_h", "MSP_ORCHESTRATE_MAX_INTERVAL_H", "--orchestrate-max-interval-h",
                 +[](Options& o) { return &o.orchestrate.max_interval_h; },
                 "A LONG-TERM task is refreshed at least once in this many hours (24..168, >= min_interval_h; "
                 "1..8760 with orchestrate.interval_override)."),
            1, 8760),
      Make("orchestrate.interval_override", "MSP_ORCHESTRATE_INTERVAL_OVERRIDE", "--orchestrate-interval-override",
           +[](Options& o) { return &o.orchestrate.interval_override; },
           "Allow orchestrate.min_interval_h / max_interval_h outside seed 003's 24 h .. 7 d clamp (each pass "
           "logs that it runs outside it)."),
      Range(Make("orchestrate.max_per_pass", "MSP_ORCHESTRATE_MAX_PER_PASS", "--orchestrate-max-per-pass",
                 +[](Options& o) { return &o.orchestrate.max_per_pass; },
                 "Refreshes per pass, highest priority first (0: every due task)."),
            0, 100000),
      NonEmpty(Make("orchestrate.summarizer", "MSP_ORCHESTRATE_SUMMARIZER", "--orchestrate-summarizer",
                    +[](Options& o) { return &o.orchestrate.summarizer; },
                    "Executive summaries: extractive (built in), llm (the llm.* chat model) or auto (llm when "
                    "llm.model is set)."),
               "auto|llm|extractive"),
      Make("orchestrate.agent", "MSP_ORCHESTRATE_AGENT", "--orchestrate-agent",
           +[](Options& o) { return &o.orchestrate.agent; },
           "The agent whose tools the tool-lineage delta follows; empty: every agent of the tenant."),
      Make("orchestrate.plane_url", "MSP_ORCHESTRATE_PLANE_URL", "--orchestrate-plane-url",
           +[](Options& o) { return &o.orchestrate.plane_url; },
           "Plane's base URL (https://api.plane.so or a self-hosted one); set, each pass imports the project's "
           "work items first."),
      Make("orchestrate.plane_api_key", "MSP_ORCHESTRATE_PLANE_API_KEY", "--orchestrate-plane-api-key",
           +[](Options& o) { return &o.orchestrate.plane_api_key; },
           "Plane API key, sent as X-API-Key. Prefer the environment variable to the file or the flag."),
      Make("orchestrate.plane_workspace", "MSP_ORCHESTRATE_PLANE_WORKSPACE", "--orchestrate-plane-workspace",
           +[](Options& o) { return &o.orchestrate.plane_workspace; }, "Plane workspace slug."),
      Make("orchestrate.plane_project", "MSP_ORCHESTRATE_PLANE_PROJECT", "--orchestrate-plane-project",
           +[](Options& o) { return &o.orchestrate.plane_project; }, "Plane project id (a UUID)."),
      Make("actor", "MSP_ACTOR", "--actor", +[](Options& o) { return &o.actor; },
           "Caller identity recorded in the audit log."),
  };
  return table;
}

const Setting* FindByKey(std::string_view key) {
  for (const Setting& s : Table()) {
    if (s.info.key == key) return &s;
  }
  return nullptr;
}

const Setting* FindByFlag(std::string_view flag) {
  for (const Setting& s : Table()) {
    if (s.info.flag == flag) return &s;
  }
  return nullptr;
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string RangeText(const Setting& s) {
  const bool has_lo = !std::isinf(s.lo);
  const bool has_hi = !std::isinf(s.hi);
  if (has_lo && has_hi) {
    return std::string(s.lo_open ? "> " : ">= ") + FormatNumber(s.lo) + " and <= " + FormatNumber(s.hi);
  }
  if (has_lo) return std::string(s.lo_open ? "> " : ">= ") + FormatNumber(s.lo);
  if (has_hi) return "<= " + FormatNumber(s.hi);
  return "";
}

// What a value of the setting must look like: "an integer >= 0".
std::string Expected(const Setting& s) {
  switch (s.info.type) {
    case SettingType::kString: return "a string";
    case SettingType::kInt: return "an integer";
    case SettingType::kSize: return "an integer >= 0";
    case SettingType::kDouble: return "a number";
    case SettingType::kBool: return "a boolean (true or false)";
    case SettingType::kStringList: return "a list of strings";
  }
  return "a value";
}

// Range and choice checks, common to every source. Returns the problem, or "".
std::string CheckValue(const Setting& s, const Value& v) {
  if (const auto* str = std::get_if<std::string>(&v)) {
    size_t bad = 0;
    if (!IsValidUtf8(*str, &bad)) return "is not valid UTF-8 (bad byte at offset " + std::to_string(bad) + ")";
    if (!s.allow_empty && str->empty()) return "must not be empty";
    if (!s.choices.empty()) {
      std::string_view rest = s.choices;
      bool found = false;
      std::string list;
      while (!rest.empty()) {
        const size_t bar = rest.find('|');
        const std::string_view choice = rest.substr(0, bar);
        found = found || choice == *str;
        if (!list.empty()) list += ", ";
        list += choice;
        rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
      }
      if (!found) return "must be one of " + list + ", got " + Quote(*str);
    }
    return "";
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    for (const std::string& item : *list) {
      size_t bad = 0;
      if (!IsValidUtf8(item, &bad)) return "has an item that is not valid UTF-8";
    }
    return "";
  }
  double d = 0;
  std::string shown;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (s.info.type == SettingType::kSize && *i < 0) return "must be >= 0, got " + std::to_string(*i);
    if (s.info.type == SettingType::kInt &&
        (*i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())) {
      return "is out of range, got " + std::to_string(*i);
    }
    d = static_cast<double>(*i);
    shown = std::to_string(*i);
  } else if (const auto* f = std::get_if<double>(&v)) {
    if (!std::isfinite(*f)) return "must be a finite number";
    d = *f;
    shown = FormatNumber(*f);
  } else {
    return "";
  }
  const bool below = s.lo_open ? !(d > s.lo) : !(d >= s.lo);
  if (below || d > s.hi) return "must be " + RangeText(s) + ", got " + shown;
  return "";
}

void StoreValue(const Setting& s, const Value& v, Options& o) {
  std::visit(
      [&](auto getter) {
        auto* field = getter(o);
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>> ||
                      std::is_same_v<T, bool>) {
          *field = std::get<T>(v);
        } else if constexpr (std::is_same_v<T, double>) {
          *field = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                     : static_cast<double>(std::get<int64_t>(v));
        } else {
          *field = static_cast<T>(std::get<int64_t>(v));
        }
      },
      s.field);
}

// The current value of a setting as text (for defaults in the help).
std::string Show(const Setting& s, Options& o) {
  return std::visit(
      [&](auto getter) -> std::string {
        auto* field = getter(o);
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + *field + "\"";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string out = "[";
          for (size_t i = 0; i < field->size(); ++i) out += (i ? ", \"" : "\"") + (*field)[i] + "\"";
          return out + "]";
        } else if constexpr (std::is_same_v<T, bool>) {
          return *field ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return FormatNumber(*field);
        } else {
          return std::to_string(*field);
        }
      },
      s.field);
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Parses an environment or flag string as the setting's type. Returns the
// problem in *error on failure.
std::optional<Value> ParseText(const Setting& s, const std::string& text, std::string* error) {
  auto fail = [&]() -> std::optional<Value> {
    *error = "must be " + Expected(s) + ", got " + Quote(text);
    return std::nullopt;
  };
  switch (s.info.type) {
    case SettingType::kString: return Value(text);
    case SettingType::kInt:
    case SettingType::kSize: {
      bool out_of_range = false;
      std::optional<int64_t> v = ParseInteger(Trim(text), &out_of_range);
      if (out_of_range) {
        *error = "is out of range, got " + Quote(text);
        return std::nullopt;
      }
      if (!v) return fail();
      return Value(*v);
    }
    case SettingType::kDouble: {
      std::optional<double> v = ParseNumber(Trim(text));
      if (!v) return fail();
      return Value(*v);
    }
    case SettingType::kBool: {
      const std::string t = Trim(text);
      if (t == "true" || t == "1" || t == "yes" || t == "on") return Value(true);
      if (t == "false" || t == "0" || t == "no" || t == "off") return Value(false);
      return fail();
    }
    case SettingType::kStringList: {
      std::vector<std::string> items;
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const size_t end = comma == std::string::npos ? text.size() : comma;
        std::string item = Trim(std::string_view(text).substr(start, end - start));
        if (!item.empty()) items.push_back(std::move(item));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return Value(std::move(items));
    }
  }
  return fail();
}

std::string TomlTypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::optional<Value> ParseToml(const Setting& s, const toml::node& n, std::string* error) {
  auto fail = [&]() -> std::optional<Value> {
    *error = "must be " + Expected(s) + ", got " + TomlTypeName(n);
    return std::nullopt;
  };
  switch (s.info.type) {
    case SettingType::kString:
      if (!n.is_string()) return fail();
      return Value(*n.value<std::string>());
    case SettingType::kInt:
    case SettingType::kSize:
      if (!n.is_integer()) return fail();
      return Value(*n.value<int64_t>());
    case SettingType::kDouble:
      if (n.is_floating_point()) return Value(*n.value<double>());
      if (n.is_integer()) return Value(static_cast<double>(*n.value<int64_t>()));
      return fail();
    case SettingType::kBool:
      if (!n.is_boolean()) return fail();
      return Value(*n.value<bool>());
    case SettingType::kStringList: {
      if (!n.is_array()) return fail();
      std::vector<std::string> items;
      const toml::array& arr = *n.as_array();
      for (size_t i = 0; i < arr.size(); ++i) {
        if (!arr[i].is_string()) {
          *error = "must be a list of strings, but item " + std::to_string(i) + " is " + TomlTypeName(arr[i]);
          return std::nullopt;
        }
        items.push_back(*arr[i].value<std::string>());
      }
      return Value(std::move(items));
    }
  }
  return fail();
}

// The sections of the table ("store", "policy", ...), and the keys in one.
std::vector<std::string> SectionKeys(std::string_view section) {
  std::vector<std::string> keys;
  for (const Setting& s : Table()) {
    const std::string_view key = s.info.key;
    const size_t dot = key.find('.');
    const std::string_view sec = dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
    if (sec == section) keys.emplace_back(dot == std::string_view::npos ? key : key.substr(dot + 1));
  }
  return keys;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

bool IsSection(std::string_view name) {
  return !name.empty() && !SectionKeys(name).empty();
}

// What toml++ 3.3 does not check itself, found by fuzz/toml_config_fuzz: a
// table header whose key starts with anything but a key character or a
// quote ("[?x]", "[\n") fails an assertion in its parser (an abort, or
// undefined behaviour where assertions are off), as do control characters
// there; and a non-ASCII character where it looks for white space (after a
// key or value, after a line-ending backslash) reaches an "unreachable"
// point of its Unicode tables (U+0485 does). All are invalid TOML: refused
// here, before toml++ reads the text.
// A header is a '[' that starts a statement: at the start of a line, outside
// a multi-line string and outside an array or inline table spanning lines.
Status CheckTomlText(const std::string& doc, const std::string& path) {
  size_t line = 1, column = 0;
  int depth = 0;              // open '[' / '{' of a value
  char string_quote = 0;      // inside a string: its quote
  bool multi_line = false;    // ... a multi-line one
  bool comment = false;
  bool line_start = true;     // only white space so far on this line
  auto error = [&](const std::string& what) {
    return Status::InvalidArgument(path + " line " + std::to_string(line) + ", column " + std::to_string(column) +
                                   ": invalid TOML: " + what);
  };
  auto is_key_start = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'';
  };
  for (size_t i = 0; i < doc.size(); ++i) {
    const char c = doc[i];
    const auto u = static_cast<unsigned char>(c);
    ++column;
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "U+%04X", u);
      return error(std::string("control character ") + hex + " (only tab and line ends are allowed)");
    }
    if (c == '\n') {
      ++line;
      column = 0;
      comment = false;
      line_start = true;
      if (!multi_line) string_quote = 0;
      continue;
    }
    if (comment) continue;
    if (string_quote != 0) {
      if (string_quote == '"' && c == '\\') {
        // A backslash ending a line of a multi-line string trims the white
        // space after it, where toml++ must not meet a non-ASCII character.
        size_t j = i + 1;
        while (multi_line && j < doc.size() && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\r' || doc[j] == '\n')) ++j;
        if (j > i + 1 && j < doc.size() && static_cast<unsigned char>(doc[j]) >= 0x80) {
          return error("a non-ASCII character right after a line-ending backslash");
        }
        if (j == i + 1) ++i;  // an escaped character
        continue;
      }
      if (c != string_quote) continue;
      if (!multi_line) {
        string_quote = 0;
      } else if (doc.compare(i, 3, std::string(3, string_quote)) == 0) {
        string_quote = 0;
        multi_line = false;
        i += 2;
        column += 2;
      }
      continue;
    }
    if (u >= 0x80) return error("a non-ASCII character outside a string or comment");
    const bool was_line_start = line_start;
    if (c != ' ' && c != '\t' && c != '\r') line_start = false;
    if (c == '[' && was_line_start && depth == 0) {
      size_t j = i + 1;
      if (j < doc.size() && doc[j] == '[') ++j;
      while (j < doc.size() && (doc[j] == ' ' || doc[j] == '\t')) ++j;
      if (j < doc.size() && doc[j] != ']' && !is_key_start(doc[j])) {
        column += j - i;
        return error("a table header's name must start with a letter, digit, '_', '-' or a quote");
      }
      continue;
    }
    switch (c) {
      case '#': comment = true; break;
      case '[': case '{': ++depth; break;
      case ']': case '}': if (depth > 0) --depth; break;
      case '"': case '\'':
        string_quote = c;
        multi_line = doc.compare(i, 3, std::string(3, c)) == 0;
        if (multi_line) {
          i += 2;
          column += 2;
        }
        break;
      default: break;
    }
  }
  return Status::Ok();
}

class Loader {
 public:
  explicit Loader(const ConfigInput& input) : input_(input) {
    for (const Setting& s : Table()) loaded_.origins[std::string(s.info.key)] = SettingOrigin{};
  }

  Result<LoadedConfig> Load() {
    MSP_ASSIGN_OR_RETURN(std::string path, FindFile());
    if (!path.empty()) MSP_RETURN_IF_ERROR(ApplyFile(path));
    MSP_RETURN_IF_ERROR(ApplyEnv());
    MSP_RETURN_IF_ERROR(ApplyFlags());
    MSP_RETURN_IF_ERROR(CheckCrossRules());
    StoreOptions& store = loaded_.options.store;
    store.data_dir = ResolveDataDir(store.data_dir, store.data_dir_base);
    return std::move(loaded_);
  }

 private:
  // --config, else MSP_CONFIG, else <data_dir>/msp.toml if present.
  Result<std::string> FindFile() {
    auto must_exist = [](const std::string& path, const std::string& from) -> Result<std::string> {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        return Status::NotFound("config file " + Quote(path) + " (from " + from + ") does not exist");
      }
      return path;
    };
    if (!input_.config_path.empty()) return must_exist(input_.config_path, "--config");
    if (auto it = input_.env.find("MSP_CONFIG"); it != input_.env.end() && !it->second.empty()) {
      return must_exist(it->second, "MSP_CONFIG");
    }
    // data_dir (and what it is relative to) as the flags, then the
    // environment, then the default give it.
    std::string data_dir = Options().store.data_dir;
    std::string base = Options().store.data_dir_base;
    if (auto it = input_.env.find("MSP_DATA_DIR"); it != input_.env.end() && !it->second.empty()) {
      data_dir = it->second;
    }
    if (auto it = input_.env.find("MSP_DATA_DIR_BASE"); it != input_.env.end() && !it->second.empty()) {
      base = it->second;
    }
    for (const auto& [flag, value] : input_.flags) {
      if (flag == "--data-dir" && !value.empty()) data_dir = value;
      if (flag == "--data-dir-base" && !value.empty()) base = value;
    }
    const std::string candidate = (std::filesystem::path(ResolveDataDir(data_dir, base)) / "msp.toml").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    return std::string();
  }

  Status ApplyFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return Status::IoError("cannot read config file " + Quote(path) + ": " + std::strerror(errno));
    }
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string doc = buf.str();
    MSP_RETURN_IF_ERROR(CheckTomlText(doc, path));
    toml::table root;
    try {
      root = toml::parse(doc, path);
    } catch (const toml::parse_error& e) {
      return Status::InvalidArgument(path + " line " + std::to_string(e.source().begin.line) + ", column " +
                                     std::to_string(e.source().begin.column) +
                                     ": invalid TOML: " + std::string(e.description()));
    } catch (const std::exception& e) {
      return Status::InvalidArgument(path + ": invalid TOML: " + e.what());
    }
    loaded_.config_file = path;
    return ApplyTable(root, "", path);
  }

  Status ApplyTable(const toml::table& table, const std::string& section, const std::string& path) {
    for (auto&& [k, node] : table) {
      const std::string name = std::string(k.str());
      const std::string key = section.empty() ? name : section + "." + name;
      const std::string at = path + " line " + std::to_string(node.source().begin.line);
      if (const Setting* s = FindByKey(key)) {
        std::string error;
        std::optional<Value> v = ParseToml(*s, node, &error);
        if (v) error = CheckValue(*s, *v);
        if (!error.empty()) return Status::InvalidArgument(at + ": " + key + " " + error);
        StoreValue(*s, *v, loaded_.options);
        loaded_.origins[key] = SettingOrigin{SettingSource::kFile, at};
        continue;
      }
      if (section.empty() && node.is_table() && IsSection(name)) {
        MSP_RETURN_IF_ERROR(ApplyTable(*node.as_table(), name, path));
        continue;
      }
      if (section.empty() && node.is_table()) {
        std::vector<std::string> sections;
        for (const Setting& s : Table()) {
          const std::string_view sk = s.info.key;
          const size_t dot = sk.find('.');
          if (dot == std::string_view::npos) continue;
          const std::string sec(sk.substr(0, dot));
          if (sections.empty() || sections.back() != sec) sections.push_back(sec);
        }
        return Status::InvalidArgument(at + ": unknown section [" + key + "]; known sections are " +
                                       Join(sections) + " (see `msp help config`)");
      }
      return Status::InvalidArgument(at + ": unknown setting " + Quote(key) + "; known " +
                                     (section.empty() ? std::string("top-level settings") : "settings in [" + section + "]") +
                                     " are " + Join(SectionKeys(section)) + " (see `msp help config`)");
    }
    return Status::Ok();
  }

  Status ApplyEnv() {
    for (const Setting& s : Table()) {
      auto it = input_.env.find(std::string(s.info.env));
      if (it == input_.env.end()) continue;
      std::string error;
      std::optional<Value> v = ParseText(s, it->second, &error);
      if (v) error = CheckValue(s, *v);
      if (!error.empty()) {
        return Status::InvalidArgument("environment variable " + std::string(s.info.env) + " (" +
                                       std::string(s.info.key) + ") " + error);
      }
      StoreValue(s, *v, loaded_.options);
      loaded_.origins[std::string(s.info.key)] = SettingOrigin{SettingSource::kEnv, std::string(s.info.env)};
    }
    return Status::Ok();
  }

  Status ApplyFlags() {
    for (const auto& [flag, text] : input_.flags) {
      const Setting* s = FindByFlag(flag);
      if (s == nullptr) return Status::InvalidArgument("unknown setting flag " + Quote(flag));
      std::string error;
      std::optional<Value> v = ParseText(*s, text, &error);
      if (v) error = CheckValue(*s, *v);
      if (!error.empty()) return Status::InvalidArgument(flag + " " + error);
      StoreValue(*s, *v, loaded_.options);
      loaded_.origins[std::string(s->info.key)] = SettingOrigin{SettingSource::kFlag, flag};
    }
    return Status::Ok();
  }

  // "policy.ttl_min_days (30, from /x/msp.toml line 3)".
  std::string Described(std::string_view key) {
    const Setting* s = FindByKey(key);
    return std::string(key) + " (" + Show(*s, loaded_.options) + ", from " + loaded_.OriginOf(key).where + ")";
  }

  Status CheckCrossRules() {
    const WritePolicyOptions& p = loaded_.options.policy;
    if (p.ttl_min_days > p.ttl_max_days) {
      return Status::InvalidArgument(Described("policy.ttl_min_days") + " is greater than " +
                                     Described("policy.ttl_max_days"));
    }
    if (p.default_ttl_days != 0 && (p.default_ttl_days < p.ttl_min_days || p.default_ttl_days > p.ttl_max_days)) {
      return Status::InvalidArgument(Described("policy.default_ttl_days") + " must be 0 or between " +
                                     Described("policy.ttl_min_days") + " and " + Described("policy.ttl_max_days"));
    }
    const MissionOptions& m = loaded_.options.mission;
    if (m.degraded_mode != "auto" && m.degraded_mode != "degraded" && m.degraded_mode != "normal") {
      return Status::InvalidArgument(Described("mission.degraded_mode") + " must be auto, degraded or normal");
    }
    const RetrievalOptions& r = loaded_.options.retrieval;
    if (r.lexical_weight == 0 && r.vector_weight == 0) {
      return Status::InvalidArgument(Described("retrieval.lexical_weight") + " and " +
                                     Described("retrieval.vector_weight") + " may not both be 0");
    }
    // The key's value is never shown: only where it came from.
    const StoreOptions& st = loaded_.options.store;
    auto named = [this](std::string_view key) {
      return std::string(key) + " (from " + loaded_.OriginOf(key).where + ")";
    };
    if (!st.encryption_key_file.empty() && !st.encryption_key.empty()) {
      return Status::InvalidArgument(named("store.encryption_key_file") + " and " + named("store.encryption_key") +
                                     " are both set; set one");
    }
    if (st.backend == "postgres" && (!st.encryption_key_file.empty() || !st.encryption_key.empty())) {
      return Status::InvalidArgument(
          "encryption at rest is for the sqlite store: with store.backend = postgres it is the database "
          "server's job (an encrypted volume, docs/encryption.md); unset " +
          named(st.encryption_key_file.empty() ? "store.encryption_key" : "store.encryption_key_file"));
    }
    return Status::Ok();
  }

  const ConfigInput& input_;
  LoadedConfig loaded_;
};

}  // namespace

std::optional<int64_t> ParseInteger(std::string_view s, bool* out_of_range) {
  if (out_of_range != nullptr) *out_of_range = false;
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end && out_of_range != nullptr) *out_of_range = true;
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string text(s);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string FormatNumber(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (std::fabs(d) < 1e15 && d == std::floor(d)) return std::to_string(static_cast<int64_t>(d));
  std::ostringstream os;
  os << d;
  return os.str();
}

std::string_view SettingTypeName(SettingType t) {
  switch (t) {
    case SettingType::kString: return "string";
    case SettingType::kInt: return "integer";
    case SettingType::kSize: return "size";
    case SettingType::kDouble: return "number";
    case SettingType::kBool: return "boolean";
    case SettingType::kStringList: return "list of strings";
  }
  return "unknown";
}

std::vector<SettingInfo> AllSettings() {
  std::vector<SettingInfo> out;
  for (const Setting& s : Table()) out.push_back(s.info);
  return out;
}

bool IsSettingFlag(std::string_view flag) { return FindByFlag(flag) != nullptr; }

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, 4) != "MSP_") continue;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

const SettingOrigin& LoadedConfig::OriginOf(std::string_view key) const {
  static const SettingOrigin kDefaultOrigin{};
  auto it = origins.find(key);
  return it == origins.end() ? kDefaultOrigin : it->second;
}

std::string RepositoryRoot(const std::string& from) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(from, ec);
  if (ec) return "";
  for (dir = dir.lexically_normal();; dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) return dir.string();  // a folder, or a worktree's file
    if (!dir.has_relative_path()) return "";                // reached the root
  }
}

std::string ResolveDataDir(const std::string& data_dir, const std::string& base, const std::string& cwd) {
  if (base != "repository" || data_dir.empty() || std::filesystem::path(data_dir).is_absolute()) return data_dir;
  std::error_code ec;
  const std::string here = cwd.empty() ? std::filesystem::current_path(ec).string() : cwd;
  const std::string root = RepositoryRoot(here);
  if (root.empty()) return data_dir;
  return (std::filesystem::path(root) / data_dir).lexically_normal().string();
}

Result<LoadedConfig> LoadConfig(const ConfigInput& input) { return Loader(input).Load(); }

std::string SettingsHelp() {
  Options defaults;
  std::ostringstream out;
  out << "Configuration, lowest to highest precedence:\n"
         "  built-in default < TOML file < MSP_* environment variable < command-line flag\n"
         "The TOML file is --config PATH, else $MSP_CONFIG, else <data_dir>/msp.toml when it exists.\n"
         "A key \"section.name\" is written in TOML as `name = value` under `[section]`.\n"
         "In the environment and in flags, booleans are true/false and lists are comma-separated.\n\n";
  for (const Setting& s : Table()) {
    out << s.info.key << "  (" << SettingTypeName(s.info.type) << ", default " << Show(s, defaults) << ")\n"
        << "    env " << s.info.env << "   flag " << s.info.flag << " VALUE\n"
        << "    " << s.info.description << "\n";
  }
  return out.str();
}

}  // namespace msp
