// THE settings table (settings_table.h): every setting msp reads, declared once.
#include "config/settings_table.h"

namespace msp {
namespace config_table {
namespace {

SettingType TypeOf(const Field& f) {
  switch (f.index()) {
    case 0: return SettingType::kString;
    case 1: return SettingType::kInt;
    case 2: return SettingType::kSize;
    case 3: return SettingType::kDouble;
    case 4: return SettingType::kBool;
    case 5: return SettingType::kStringList;
    default: return SettingType::kEnum;
  }
}

Setting Make(std::string_view key, std::string_view env, std::string_view flag, Field field,
             std::string_view description) {
  Setting s;
  s.info = SettingInfo{key, env, flag, TypeOf(field), description, {}};
  s.field = field;
  if (auto* get = std::get_if<EnumRef (*)(Settings&)>(&field)) {
    static Settings defaults;  // the names only: one object for every enum setting
    const EnumRef ref = (*get)(defaults);
    s.info.choices.assign(ref.names.begin(), ref.names.end());
  }
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
constexpr size_t kRows = 147;  // the rows Table() adds (room reserved for them)

}  // namespace

const std::vector<Setting>& Table() {
  // Each row made and moved in on its own: a braced list would hold every
  // row at once on the stack (~25 KB that each command's first use of the
  // table touched) and copy them, the lists of names too.
  static const std::vector<Setting> table = [] {
    std::vector<Setting> rows;
    rows.reserve(kRows);
    auto add = [&rows](Setting s) { rows.push_back(std::move(s)); };
    add(Make("store.backend", "MSP_BACKEND", "--backend",
             +[](Settings& o) { return Ref(&o.store.backend, kStoreBackendNames); },
             "Store backend: sqlite (msp.db in data_dir) or postgres (store.postgres_url; several "
             "msp servers may share it, docs/postgres.md)."));
    add(NonEmpty(Make("store.data_dir", "MSP_DATA_DIR", "--data-dir", +[](Settings& o) { return &o.store.data_dir; },
                      "Data directory: holds msp.db (the truth) and the derived indexes.")));
    add(NonEmpty(Make("store.data_dir_base", "MSP_DATA_DIR_BASE", "--data-dir-base",
                      +[](Settings& o) { return &o.store.data_dir_base; },
                      "What a relative data_dir is relative to: current (the current directory) or repository "
                      "(the top of the git work tree holding the current directory; the current directory "
                      "outside one). `msp setup claude-code` uses repository."),
                 "current|repository"));
    add(NonEmpty(Make("store.synchronous", "MSP_SYNCHRONOUS", "--synchronous",
                      +[](Settings& o) { return &o.store.synchronous; },
                      "SQLite synchronous mode: full (survives power loss) or normal (survives a killed "
                      "process)."),
                 "full|normal"));
    add(Range(Make("store.busy_timeout_ms", "MSP_BUSY_TIMEOUT_MS", "--busy-timeout-ms",
                   +[](Settings& o) { return &o.store.busy_timeout_ms; },
                   "How long a writer waits for a lock held by another process, in ms (>= 0)."),
              0, kInf));
    add(Make("store.postgres_url", "MSP_POSTGRES_URL", "--postgres-url",
             +[](Settings& o) { return &o.store.postgres_url; },
             "postgres: the database as a libpq connection string or URL (postgresql://msp@db1:5432/msp); "
             "empty: libpq's defaults ($PGHOST, $PGDATABASE, ...). Prefer the environment variable (or "
             "~/.pgpass) for a password."));
    add(NonEmpty(Make("store.postgres_schema", "MSP_POSTGRES_SCHEMA", "--postgres-schema",
                      +[](Settings& o) { return &o.store.postgres_schema; },
                      "postgres: the schema holding msp's tables, created if missing (lower-case letters, "
                      "digits and _).")));
    add(Range(Make("store.postgres_pool_size", "MSP_POSTGRES_POOL_SIZE", "--postgres-pool-size",
                   +[](Settings& o) { return &o.store.postgres_pool_size; },
                   "postgres: database connections per msp process (1..1000)."),
              1, 1000));
    add(Range(Make("store.postgres_connect_timeout_ms", "MSP_POSTGRES_CONNECT_TIMEOUT_MS",
                   "--postgres-connect-timeout-ms", +[](Settings& o) { return &o.store.postgres_connect_timeout_ms; },
                   "postgres: how long to wait for a connection, new (libpq counts whole seconds, at least 2) "
                   "or from the pool, in ms."),
              0, kInf));
    add(Range(Make("store.postgres_statement_timeout_ms", "MSP_POSTGRES_STATEMENT_TIMEOUT_MS",
                   "--postgres-statement-timeout-ms",
                   +[](Settings& o) { return &o.store.postgres_statement_timeout_ms; },
                   "postgres: longest a statement may run, in ms (0: no limit); a longer one fails as unavailable."),
              0, kInf));
    add(Make("store.encryption_key_file", "MSP_ENCRYPTION_KEY_FILE", "--encryption-key-file",
             +[](Settings& o) { return &o.store.encryption_key_file; },
             "sqlite: encrypt msp.db at rest with the key in this file (64 hex digits, openssl rand -hex 32; "
             "mode 0600); the derived indexes are then kept in memory (docs/encryption.md)."));
    add(Make("store.encryption_key", "MSP_ENCRYPTION_KEY", "--encryption-key",
             +[](Settings& o) { return &o.store.encryption_key; },
             "sqlite: the encryption key itself (64 hex digits); prefer the environment variable or "
             "store.encryption_key_file to a flag, which other users can see."));
    add(Range(Make("store.idempotency_ttl_hours", "MSP_IDEMPOTENCY_TTL_HOURS", "--idempotency-ttl-hours",
                   +[](Settings& o) { return &o.store.idempotency_ttl_hours; },
                   "How long a write's idempotency key (--request-id, Idempotency-Key, request_id) is kept, in "
                   "hours (1..8760): a repeat within it answers the first result and writes nothing."),
              1, 8760));
    add(Make("embedder.provider", "MSP_EMBEDDER", "--embedder",
             +[](Settings& o) { return Ref(&o.embedder.provider, kEmbedderProviderNames); },
             "Embedder: hashing (built in, lexical, no model needed), static (built in, GloVe word "
             "vectors, semantic, no model server; its table: `scripts/deps.sh --word-vectors`), openai "
             "(any OpenAI-compatible POST /embeddings: Ollama, llama.cpp server, vLLM, TEI, OpenAI) or "
             "native (a BERT-family sentence encoder such as all-MiniLM-L6-v2 run in-process from the "
             "model directory embedder.model; docs/embeddings.md). "
             "Changing it needs `msp reembed` on an existing store."));
    add(Range(Make("embedder.dimension", "MSP_EMBEDDER_DIMENSION", "--embedder-dimension",
                   +[](Settings& o) { return &o.embedder.dimension; },
                   "Embedding dimension (1..65536; hashing: 8..4096). For openai, the size of the model's vectors "
                   "(nomic-embed-text 768, text-embedding-3-small 1536); a reply of another size is an error."),
              1, 65536));
    add(Make("embedder.vectors_path", "MSP_EMBEDDER_VECTORS_PATH", "--embedder-vectors-path",
             +[](Settings& o) { return &o.embedder.vectors_path; },
             "static: the word-vector table (empty: the one `scripts/deps.sh --word-vectors` makes, "
             "data/embeddings/glove-6b-100d.msv, else /usr/local/share/msp/ or /usr/share/msp/). Its rows set the "
             "dimension; embedder.dimension is not used."));
    add(Make("embedder.base_url", "MSP_EMBEDDER_BASE_URL", "--embedder-base-url",
             +[](Settings& o) { return &o.embedder.base_url; },
             "openai: the server's URL up to and including /v1 (Ollama http://localhost:11434/v1, llama.cpp "
             "http://localhost:8080/v1, OpenAI https://api.openai.com/v1)."));
    add(Make("embedder.model", "MSP_EMBEDDER_MODEL", "--embedder-model",
             +[](Settings& o) { return &o.embedder.model; },
             "openai: the embedding model (required), e.g. nomic-embed-text, text-embedding-3-small. native: the "
             "model directory (required): model.safetensors, config.json, vocab.txt or tokenizer.json, as a "
             "Hugging Face sentence-transformers repository has them, or the name of a model `msp model pull` put "
             "in <data_dir>/models (a name without '/'; docs/embeddings.md)."));
    add(Make("embedder.api_key", "MSP_EMBEDDER_API_KEY", "--embedder-api-key",
             +[](Settings& o) { return &o.embedder.api_key; },
             "openai: bearer token (empty: none; with base_url on https://api.openai.com, $OPENAI_API_KEY). "
             "Prefer the environment variable to the file or the flag."));
    add(Range(Make("embedder.batch_size", "MSP_EMBEDDER_BATCH_SIZE", "--embedder-batch-size",
                   +[](Settings& o) { return &o.embedder.batch_size; },
                   "openai: texts per request (1..2048); also the records per batch of `msp reembed`."),
              1, 2048));
    add(Range(Make("embedder.timeout_ms", "MSP_EMBEDDER_TIMEOUT_MS", "--embedder-timeout-ms",
                   +[](Settings& o) { return &o.embedder.timeout_ms; },
                   "openai: connect and read timeout of one request, in ms (>= 1)."),
              1, kInf));
    add(Range(Make("embedder.max_retries", "MSP_EMBEDDER_MAX_RETRIES", "--embedder-max-retries",
                   +[](Settings& o) { return &o.embedder.max_retries; },
                   "openai: retries after a 408, 429, 5xx, malformed reply or network error, with exponential "
                   "backoff (0..20)."),
              0, 20));
    add(Range(Make("embedder.threads", "MSP_EMBEDDER_THREADS", "--embedder-threads",
                   +[](Settings& o) { return &o.embedder.threads; },
                   "native: threads one embedding call uses, its texts split between them (0: one per core, at "
                   "most 8; 0..256)."),
              0, 256));
    add(NonEmpty(Make("embedder.pooling", "MSP_EMBEDDER_POOLING", "--embedder-pooling",
                      +[](Settings& o) { return &o.embedder.pooling; },
                      "native: how token vectors become the text's vector: auto (the model's "
                      "1_Pooling/config.json, else mean), mean (all-MiniLM, e5, gte) or cls (bge). Part of the "
                      "embedder's identity."),
                 "auto|mean|cls"));
    add(NonEmpty(Make("embedder.quantize", "MSP_EMBEDDER_QUANTIZE", "--embedder-quantize",
                      +[](Settings& o) { return &o.embedder.quantize; },
                      "native: none (fp32), or int8: the linear layers' weights quantised per output channel at "
                      "load and their inputs per row, int32 sums, dequantised to fp32 "
                      "(attention and layer norms stay fp32): with AVX-512 VNNI about 4x faster for one "
                      "short text (not faster without it), a quarter of the linear layers' memory, vectors within "
                      "a cosine of 0.9996 of fp32's on random models (docs/embeddings.md). Part of the embedder's "
                      "identity."),
                 "none|int8"));
    add(Make("policy.min_chars", "MSP_POLICY_MIN_CHARS", "--policy-min-chars",
             +[](Settings& o) { return &o.policy.min_chars; },
             "Writes with shorter text are refused (0: rule off)."));
    add(Make("policy.trivial_phrases", "MSP_POLICY_TRIVIAL_PHRASES", "--policy-trivial-phrases",
             +[](Settings& o) { return &o.policy.trivial_phrases; },
             "Acknowledgements refused as trivial, per language (whole text; case folded for Latin, Greek and "
             "Cyrillic; trailing punctuation ignored). Add your languages' to the list."));
    add(Make("policy.refuse_high_sensitivity", "MSP_POLICY_REFUSE_HIGH_SENSITIVITY",
             "--policy-refuse-high-sensitivity", +[](Settings& o) { return &o.policy.refuse_high_sensitivity; },
             "Refuse records of sensitivity high."));
    add(Make("policy.trusted_sources", "MSP_POLICY_TRUSTED_SOURCES", "--policy-trusted-sources",
             +[](Settings& o) { return &o.policy.trusted_sources; },
             "Sources a general write is accepted from (empty: any)."));
    add(Make("policy.context_trusted_sources", "MSP_POLICY_CONTEXT_TRUSTED_SOURCES",
             "--policy-context-trusted-sources", +[](Settings& o) { return &o.policy.context_trusted_sources; },
             "Sources whose records are labelled trusted where stored text reaches a model (working memory, "
             "digests, MCP results); records of every other source are labelled untrusted (docs/access.md)."));
    add(Make("policy.stable_tags", "MSP_POLICY_STABLE_TAGS", "--policy-stable-tags",
             +[](Settings& o) { return &o.policy.stable_tags; },
             "Tags of which a general write must carry one when require_stable_tag is on."));
    add(Make("policy.require_stable_tag", "MSP_POLICY_REQUIRE_STABLE_TAG", "--policy-require-stable-tag",
             +[](Settings& o) { return &o.policy.require_stable_tag; },
             "Refuse general writes without one of stable_tags."));
    add(Range(Make("policy.ttl_min_days", "MSP_POLICY_TTL_MIN_DAYS", "--policy-ttl-min-days",
                   +[](Settings& o) { return &o.policy.ttl_min_days; },
                   "Smallest TTL a write may ask for, in days (1..36500, <= ttl_max_days)."),
              1, 36500));
    add(Range(Make("policy.ttl_max_days", "MSP_POLICY_TTL_MAX_DAYS", "--policy-ttl-max-days",
                   +[](Settings& o) { return &o.policy.ttl_max_days; },
                   "Largest TTL a write may ask for, in days (1..36500, >= ttl_min_days)."),
              1, 36500));
    add(Range(Make("policy.default_ttl_days", "MSP_POLICY_DEFAULT_TTL_DAYS", "--policy-default-ttl-days",
                   +[](Settings& o) { return &o.policy.default_ttl_days; },
                   "TTL of writes that do not ask for one (0: never expire; else within the TTL bounds)."),
              0, 36500));
    add(Make("policy.max_items_per_user", "MSP_POLICY_MAX_ITEMS_PER_USER", "--policy-max-items-per-user",
             +[](Settings& o) { return &o.policy.max_items_per_user; },
             "Facts kept per (tenant, user); past it the least valuable are evicted (0: no limit)."));
    add(Range(Make("policy.max_text_bytes", "MSP_POLICY_MAX_TEXT_BYTES", "--policy-max-text-bytes",
                   +[](Settings& o) { return &o.policy.max_text_bytes; },
                   "Largest text of a write (fact, decision, document...), in bytes (>= 1); episodes and imported "
                   "records: policy.max_record_bytes."),
              1, kInf));
    add(Range(Make("policy.max_record_bytes", "MSP_POLICY_MAX_RECORD_BYTES", "--policy-max-record-bytes",
                   +[](Settings& o) { return &o.policy.max_record_bytes; },
                   "Largest text of an episode or an imported record, in bytes (>= 1): stored whole, a long one "
                   "indexed as passages (retrieval.passage_bytes); over it an import does as policy.on_oversize says."),
              1, kInf));
    add(NonEmpty(Make("policy.on_oversize", "MSP_POLICY_ON_OVERSIZE", "--policy-on-oversize",
                      +[](Settings& o) { return &o.policy.on_oversize; },
                      "An imported record over policy.max_record_bytes: refuse (the import fails), split (stored as "
                      "consecutive records, provenance split_from) or truncate. msp import --on-oversize."),
                 "refuse|split|truncate"));
    add(Make("retrieval.fusion", "MSP_RETRIEVAL_FUSION", "--retrieval-fusion",
             +[](Settings& o) { return Ref(&o.retrieval.fusion, kFusionNames); },
             "How the lexical and vector signals are fused: score (weighted mean of their scores on [0, 1]) "
             "or rrf (weighted reciprocal-rank fusion, retrieval.rrf_k)."));
    add(Range(Make("retrieval.rrf_k", "MSP_RETRIEVAL_RRF_K", "--retrieval-rrf-k",
                   +[](Settings& o) { return &o.retrieval.rrf_k; },
                   "Reciprocal-rank fusion constant k (> 0)."),
              1, kInf));
    add(Range(Make("retrieval.lexical_weight", "MSP_RETRIEVAL_LEXICAL_WEIGHT", "--retrieval-lexical-weight",
                   +[](Settings& o) { return &o.retrieval.lexical_weight; },
                   "Weight of the BM25 signal in fusion (>= 0)."),
              0, kInf));
    add(Range(Make("retrieval.vector_weight", "MSP_RETRIEVAL_VECTOR_WEIGHT", "--retrieval-vector-weight",
                   +[](Settings& o) { return &o.retrieval.vector_weight; },
                   "Weight of the cosine signal in fusion (>= 0; the two weights may not both be 0)."),
              0, kInf));
    add(Range(Make("retrieval.candidates", "MSP_RETRIEVAL_CANDIDATES", "--retrieval-candidates",
                   +[](Settings& o) { return &o.retrieval.candidates; },
                   "Candidates taken from each signal before fusion (>= 1)."),
              1, kInf));
    add(Range(Make("retrieval.vector_candidates", "MSP_RETRIEVAL_VECTOR_CANDIDATES", "--retrieval-vector-candidates",
                   +[](Settings& o) { return &o.retrieval.vector_candidates; },
                   "Candidates taken from the vector signal (>= 0; 0: retrieval.candidates)."),
              0, kInf));
    add(Range(Make("retrieval.vector_min_cosine", "MSP_RETRIEVAL_VECTOR_MIN_COSINE", "--retrieval-vector-min-cosine",
                   +[](Settings& o) { return &o.retrieval.vector_min_cosine; },
                   "The vector signal ignores records below this cosine (-1..1)."),
              -1, 1));
    add(NonEmpty(Make("retrieval.language", "MSP_RETRIEVAL_LANGUAGE", "--retrieval-language",
                      +[](Settings& o) { return &o.retrieval.language; },
                      "Language of the stemmer and stop words (a Snowball name: english, russian, ...).")));
    add(Range(Make("retrieval.bm25_k1", "MSP_RETRIEVAL_BM25_K1", "--retrieval-bm25-k1",
                   +[](Settings& o) { return &o.retrieval.bm25_k1; },
                   "BM25 term-frequency saturation of the lexical index (>= 0)."),
              0, kInf));
    add(Range(Make("retrieval.bm25_b", "MSP_RETRIEVAL_BM25_B", "--retrieval-bm25-b",
                   +[](Settings& o) { return &o.retrieval.bm25_b; },
                   "BM25 length normalisation of the lexical index (0..1)."),
              0, 1));
    add(Make("retrieval.date_terms", "MSP_RETRIEVAL_DATE_TERMS", "--retrieval-date-terms",
             +[](Settings& o) { return &o.retrieval.date_terms; },
             "Index each record's month and year (of created_at) as words; changing it rebuilds the lexical index."));
    add(NonEmpty(Make("retrieval.context", "MSP_RETRIEVAL_CONTEXT", "--retrieval-context",
                      +[](Settings& o) { return &o.retrieval.context; },
                      "How an episode's own match and its context combine: prior (its own match and its best "
                      "neighbours' discounted, as independent evidence (noisy-or), plus session_weight / (1 + its "
                      "session's rank)) or sum (own + neighbours + session boost, issue 3's ranking)."),
                 "prior|sum"));
    add(Range(Make("retrieval.neighbour_weight_1", "MSP_RETRIEVAL_NEIGHBOUR_WEIGHT_1", "--retrieval-neighbour-weight-1",
                   +[](Settings& o) { return &o.retrieval.neighbour_weight_1; },
                   "Share of the score of the episodes one step before and after that an episode may borrow "
                   "(prior: the better of the two; sum: both added) (>= 0)."),
              0, kInf));
    add(Range(Make("retrieval.neighbour_weight_2", "MSP_RETRIEVAL_NEIGHBOUR_WEIGHT_2", "--retrieval-neighbour-weight-2",
                   +[](Settings& o) { return &o.retrieval.neighbour_weight_2; },
                   "Share of the score of the episodes two steps before and after that an episode may borrow "
                   "(prior: the better of the two; sum: both added) (>= 0)."),
              0, kInf));
    add(Range(Make("retrieval.context_sessions", "MSP_RETRIEVAL_CONTEXT_SESSIONS", "--retrieval-context-sessions",
                   +[](Settings& o) { return &o.retrieval.context_sessions; },
                   "This many sessions, those that match the query best as wholes (session BM25), have all their "
                   "episodes scored with their neighbours (>= 0; 0: BM25 hits only)."),
              0, 1000));
    add(Range(Make("retrieval.session_weight", "MSP_RETRIEVAL_SESSION_WEIGHT", "--retrieval-session-weight",
                   +[](Settings& o) { return &o.retrieval.session_weight; },
                   "Session prior of an episode: prior, session_weight / (1 + its session's rank among the query's "
                   "sessions); sum, session_weight x its session's match (>= 0; 0: off)."),
              0, kInf));
    add(Range(Make("retrieval.session_mix", "MSP_RETRIEVAL_SESSION_MIX", "--retrieval-session-mix",
                   +[](Settings& o) { return &o.retrieval.session_mix; },
                   "Session match = mix x session BM25 (its matching episodes as one document, relative) + "
                   "(1 - mix) x best episode score (0..1)."),
              0, 1));
    add(Range(Make("retrieval.passage_bytes", "MSP_RETRIEVAL_PASSAGE_BYTES", "--retrieval-passage-bytes",
                   +[](Settings& o) { return &o.retrieval.passage_bytes; },
                   "A record longer than this is indexed as passages of about this many bytes, and its hit shows "
                   "the passage that matched (0: the measured default, 256; changing it rebuilds the lexical index)."),
              0, 1048576));
    add(Range(Make("retrieval.max_tokens_per_hit", "MSP_RETRIEVAL_MAX_TOKENS_PER_HIT", "--retrieval-max-tokens-per-hit",
                   +[](Settings& o) { return &o.retrieval.max_tokens_per_hit; },
                   "The most a hit shows of its record, in tokens (tokens.counter); a longer passage or text is cut "
                   "(0: no bound)."),
              0, 1000000));
    add(NonEmpty(Make("retrieval.scores", "MSP_RETRIEVAL_SCORES", "--retrieval-scores",
                      +[](Settings& o) { return &o.retrieval.scores; },
                      "What a hit's score means: calibrated (an estimate of the chance it is relevant, comparable "
                      "across queries, so min_score 0.7 drops a query that nothing matches well) or relative (over "
                      "the query's best hit). The order is the same."),
                 "calibrated|relative"));
    add(Range(Make("facts.dedup_cosine", "MSP_FACTS_DEDUP_COSINE", "--facts-dedup-cosine",
                   +[](Settings& o) { return &o.facts.dedup_cosine; },
                   "A new fact above this cosine to an active fact merges into it (in (0, 1])."),
              0, 1, /*lo_open=*/true));
    add(Range(Make("consolidation.every_n_episodes", "MSP_CONSOLIDATION_EVERY_N_EPISODES",
                   "--consolidation-every-n-episodes", +[](Settings& o) { return &o.consolidation.every_n_episodes; },
                   "Consolidate a session after this many new episodes (0: only when asked or at session "
                   "end)."),
              0, kInf));
    add(Make("consolidation.extractor", "MSP_CONSOLIDATION_EXTRACTOR", "--consolidation-extractor",
             +[](Settings& o) { return Ref(&o.consolidation.extractor, kExtractorKindNames); },
             "Fact extractor: rules (built in, no model) or llm (a chat model, llm.*: facts with "
             "confidence, merged into their twin or superseding what they contradict)."));
    add(Make("consolidation.background", "MSP_CONSOLIDATION_BACKGROUND", "--consolidation-background",
             +[](Settings& o) { return &o.consolidation.background; },
             "Consolidate on a background worker: episode add and session end only queue the session, so a "
             "write never waits for a model (the queue is kept in the store across restarts)."));
    add(Make("llm.base_url", "MSP_LLM_BASE_URL", "--llm-base-url", +[](Settings& o) { return &o.llm.base_url; },
             "Chat model server for the llm extractor, up to and including /v1 (Ollama "
             "http://localhost:11434/v1, llama.cpp http://localhost:8080/v1, OpenAI https://api.openai.com/v1)."));
    add(Make("llm.model", "MSP_LLM_MODEL", "--llm-model", +[](Settings& o) { return &o.llm.model; },
             "Chat model for the llm extractor (required for it), e.g. llama3.1, qwen2.5:7b, gpt-4o-mini."));
    add(Make("llm.api_key", "MSP_LLM_API_KEY", "--llm-api-key", +[](Settings& o) { return &o.llm.api_key; },
             "Bearer token of the chat server (empty: none; with base_url on https://api.openai.com, "
             "$OPENAI_API_KEY). Prefer the environment variable to the file or the flag."));
    add(Range(Make("llm.timeout_ms", "MSP_LLM_TIMEOUT_MS", "--llm-timeout-ms",
                   +[](Settings& o) { return &o.llm.timeout_ms; },
                   "Connect and read timeout of one chat request, in ms (>= 1)."),
              1, kInf));
    add(Range(Make("llm.max_retries", "MSP_LLM_MAX_RETRIES", "--llm-max-retries",
                   +[](Settings& o) { return &o.llm.max_retries; },
                   "Retries of a chat request after a 408, 429, 5xx, malformed reply or network error, with "
                   "exponential backoff and jitter, honouring Retry-After (0..20)."),
              0, 20));
    add(NonEmpty(Make("llm.response_format", "MSP_LLM_RESPONSE_FORMAT", "--llm-response-format",
                      +[](Settings& o) { return &o.llm.response_format; },
                      "How JSON replies are asked for: auto (json_schema; on a 400 rejecting it, json_object, then "
                      "the prompt alone), json_schema, json_object or prompt. Replies are always checked "
                      "against the schema."),
                 "auto|json_schema|json_object|prompt"));
    add(NonEmpty(Make("server.bind", "MSP_SERVER_BIND", "--bind", +[](Settings& o) { return &o.server.bind; },
                      "Address `msp serve` listens on (127.0.0.1: this machine only; 0.0.0.0: every interface).")));
    add(Range(Make("server.port", "MSP_SERVER_PORT", "--port", +[](Settings& o) { return &o.server.port; },
                   "TCP port of `msp serve` (0..65535; 0: any free port, printed at start)."),
              0, 65535));
    add(Range(Make("server.threads", "MSP_SERVER_THREADS", "--server-threads",
                   +[](Settings& o) { return &o.server.threads; },
                   "Worker threads answering HTTP requests (0..1024; 0: max(32, 8 x the CPU threads))."),
              0, 1024));
    add(Range(Make("server.max_body_bytes", "MSP_SERVER_MAX_BODY_BYTES", "--server-max-body-bytes",
                   +[](Settings& o) { return &o.server.max_body_bytes; },
                   "Largest HTTP request body in bytes; larger ones get 413 (>= 1024)."),
              1024, kInf));
    add(Make("server.api_keys", "MSP_API_KEYS", "--api-keys", +[](Settings& o) { return &o.server.api_keys; },
             "API keys as KEY=TENANT or KEY=TENANT:CLEARANCE entries (a key reads and writes only its tenant and, "
             "with a clearance 0..9, is served only records at or below it; no clearance: no limit; keys of 16+ "
             "characters)."));
    add(Make("server.api_keys_file", "MSP_API_KEYS_FILE", "--api-keys-file",
             +[](Settings& o) { return &o.server.api_keys_file; },
             "File of API keys, one \"KEY TENANT\" or \"KEY TENANT CLEARANCE\" a line (# starts a comment)."));
    add(Make("server.allow_anonymous", "MSP_SERVER_ALLOW_ANONYMOUS", "--allow-anonymous",
             +[](Settings& o) { return &o.server.allow_anonymous; },
             "With no API keys configured, serve every request as tenant default (loopback bind only)."));
    add(Make("server.access_log", "MSP_SERVER_ACCESS_LOG", "--access-log",
             +[](Settings& o) { return &o.server.access_log; },
             "Log each HTTP request as one JSON line on stderr."));
    add(NonEmpty(Make("server.compression", "MSP_SERVER_COMPRESSION", "--server-compression",
                      +[](Settings& o) { return &o.server.compression; },
                      "Answers of 1 KB or more (text, JSON) are sent gzip-encoded to clients that accept it: remote "
                      "(clients not on loopback, where the bytes cost nothing and encoding costs both ends), all "
                      "(loopback too: a reverse proxy on this machine passing answers on), or off."),
                 "remote|all|off"));
    add(Make("server.local_socket", "MSP_SERVER_LOCAL_SOCKET", "--server-local-socket",
             +[](Settings& o) { return &o.server.local_socket; },
             "msp serve also listens on <data_dir>/msp.sock, and an msp command on that data directory (same user, "
             "same answering settings) hands it its read-only operations instead of opening the store; false: "
             "neither (the server does not listen there, the command does not look)."));
    add(Range(Make("server.resident_autostart", "MSP_SERVER_RESIDENT_AUTOSTART", "--server-resident-autostart",
                   +[](Settings& o) { return &o.server.resident_autostart; },
                   "A read-only msp command that finds no server on <data_dir>/msp.sock answers itself and, when "
                   "the store has seen at least this many changes (its change sequence), starts one in the "
                   "background for the commands after it (msp serve --local-only: no HTTP); 0: never."),
              0, 2147483647));
    add(Range(Make("server.resident_idle_seconds", "MSP_SERVER_RESIDENT_IDLE_SECONDS", "--server-resident-idle-seconds",
                   +[](Settings& o) { return &o.server.resident_idle_seconds; },
                   "How long a server that a command started (server.resident_autostart) waits for a call "
                   "before it stops, in seconds (1..86400)."),
              1, 86400));
    add(Range(Make("server.stats_cache_ms", "MSP_SERVER_STATS_CACHE_MS", "--server-stats-cache-ms",
                   +[](Settings& o) { return &o.server.stats_cache_ms; },
                   "How long /metrics reuses record counts, in ms (0..3600000)."),
              0, 3600000));
    add(Range(Make("server.header_timeout_ms", "MSP_SERVER_HEADER_TIMEOUT_MS", "--server-header-timeout-ms",
                   +[](Settings& o) { return &o.server.header_timeout_ms; },
                   "A request's line and headers must arrive within this many ms (of connecting, or of the first "
                   "byte on a kept-alive connection); later: 408 and the connection is closed (100..600000)."),
              100, 600000));
    add(Range(Make("server.body_timeout_ms", "MSP_SERVER_BODY_TIMEOUT_MS", "--server-body-timeout-ms",
                   +[](Settings& o) { return &o.server.body_timeout_ms; },
                   "A request's body (its whole Content-Length) must arrive within this many ms of its headers; "
                   "later: 408, nothing done, the connection closed (100..3600000)."),
              100, 3600000));
    add(Range(Make("server.max_connections", "MSP_SERVER_MAX_CONNECTIONS", "--server-max-connections",
                   +[](Settings& o) { return &o.server.max_connections; },
                   "Open HTTP connections at most; a new one past it closes the oldest that is not being answered "
                   "(503), or gets 503 itself (1..100000)."),
              1, 100000));
    add(Range(Make("server.max_connections_per_client", "MSP_SERVER_MAX_CONNECTIONS_PER_CLIENT",
                   "--server-max-connections-per-client",
                   +[](Settings& o) { return &o.server.max_connections_per_client; },
                   "Open HTTP connections from one address at most, handled as server.max_connections (1..100000; "
                   "raise it behind a proxy, whose connections share its address)."),
              1, 100000));
    add(Range(Make("server.max_queued_requests", "MSP_SERVER_MAX_QUEUED_REQUESTS", "--server-max-queued-requests",
                   +[](Settings& o) { return &o.server.max_queued_requests; },
                   "Complete requests waiting for a worker thread at most; past it a request gets 503 with "
                   "Retry-After (1..100000)."),
              1, 100000));
    add(Make("server.allowed_hosts", "MSP_SERVER_ALLOWED_HOSTS", "--server-allowed-hosts",
             +[](Settings& o) { return &o.server.allowed_hosts; },
             "Host names (memory.example.com) requests may name besides the bind address (and localhost when it is "
             "loopback, any IP when it is 0.0.0.0); other Host headers get 403 (against DNS rebinding)."));
    add(Make("server.allowed_origins", "MSP_SERVER_ALLOWED_ORIGINS", "--server-allowed-origins",
             +[](Settings& o) { return &o.server.allowed_origins; },
             "Origins (https://app.example.com) the REST routes accept besides loopback ones; other Origin headers "
             "get 403 (against cross-site requests). /mcp has mcp.allowed_origins."));
    add(Range(Make("mission.capacity_events_per_min", "MSP_MISSION_CAPACITY_EVENTS_PER_MIN",
                   "--mission-capacity-events-per-min", +[](Settings& o) { return &o.mission.capacity_events_per_min; },
                   "Degraded mode: mission events per minute above which a query ranks by alpha x criticality + "
                   "(1 - alpha) x similarity, alpha = clamp((rate - capacity) / capacity, 0, 1) (>= 0; 0: off)."),
              0, kInf));
    add(Range(Make("mission.rate_window_min", "MSP_MISSION_RATE_WINDOW_MIN", "--mission-rate-window-min",
                   +[](Settings& o) { return &o.mission.rate_window_min; },
                   "Degraded mode: the event rate is counted over this many minutes up to now (1..1440)."),
              1, 1440));
    add(Range(Make("mission.escalation_window_min", "MSP_MISSION_ESCALATION_WINDOW_MIN",
                   "--mission-escalation-window-min", +[](Settings& o) { return &o.mission.escalation_window_min; },
                   "Handoff: a component's events in the last this-many minutes are compared with the window "
                   "before (1..10080)."),
              1, 10080));
    add(Range(Make("mission.escalation_factor", "MSP_MISSION_ESCALATION_FACTOR", "--mission-escalation-factor",
                   +[](Settings& o) { return &o.mission.escalation_factor; },
                   "Handoff: a component escalates when its recent events are at least this many times the "
                   "earlier ones (>= 1)."),
              1, kInf));
    add(Range(Make("mission.escalation_min_events", "MSP_MISSION_ESCALATION_MIN_EVENTS",
                   "--mission-escalation-min-events", +[](Settings& o) { return &o.mission.escalation_min_events; },
                   "Handoff: and at least this many recent events (>= 1)."),
              1, kInf));
    add(Range(Make("mission.query_candidates", "MSP_MISSION_QUERY_CANDIDATES", "--mission-query-candidates",
                   +[](Settings& o) { return &o.mission.query_candidates; },
                   "workflow_memory_query: candidates taken from each layer before the budget cut (1..1000)."),
              1, 1000));
    add(NonEmpty(Make("mission.degraded_mode", "MSP_MISSION_DEGRADED_MODE", "--mission-degraded-mode",
                      +[](Settings& o) { return &o.mission.degraded_mode; },
                      "Degraded mode: auto (by the event rate), degraded (always; alpha at least 0.5) or normal "
                      "(never).")));
    add(Range(Make("mission.min_relevance", "MSP_MISSION_MIN_RELEVANCE", "--mission-min-relevance",
                   +[](Settings& o) { return &o.mission.min_relevance; },
                   "Digests (query, handoff) serve no entry scoring below this (0..1; a record sharing no word with "
                   "the task scores at most 0.09, an unrelated one about 0.01)."),
              0, 1));
    add(Range(Make("mission.near_duplicate", "MSP_MISSION_NEAR_DUPLICATE", "--mission-near-duplicate",
                   +[](Settings& o) { return &o.mission.near_duplicate; },
                   "Digest entries of a repeating kind (events, facts, chunks; not decisions) whose word sets overlap "
                   "at least this much (Jaccard, numbers ignored, 0.5..1) collapse into one entry with a count and "
                   "time span."),
              0.5, 1));
    add(Make("mcp.allowed_origins", "MSP_MCP_ALLOWED_ORIGINS", "--mcp-allowed-origins",
             +[](Settings& o) { return &o.mcp.allowed_origins; },
             "Origins (https://app.example.com) that /mcp accepts besides loopback ones; other Origin headers get "
             "403."));
    add(Range(Make("mcp.read_graph_page_size", "MSP_MCP_READ_GRAPH_PAGE_SIZE", "--mcp-read-graph-page-size",
                   +[](Settings& o) { return &o.mcp.read_graph_page_size; },
                   "MCP read_graph: entities and relations per page when the call gives no limit (1..1000)."),
              1, 1000));
    add(Range(Make("mcp.search_nodes_limit", "MSP_MCP_SEARCH_NODES_LIMIT", "--mcp-search-nodes-limit",
                   +[](Settings& o) { return &o.mcp.search_nodes_limit; },
                   "MCP search_nodes: entities returned when the call gives no limit (1..1000)."),
              1, 1000));
    add(Range(Make("mcp.search_nodes_min_score", "MSP_MCP_SEARCH_NODES_MIN_SCORE", "--mcp-search-nodes-min-score",
                   +[](Settings& o) { return &o.mcp.search_nodes_min_score; },
                   "MCP search_nodes: ranked hits below this score are dropped (0..1; 0.1 drops hits found only "
                   "by the vector signal at the default weights)."),
              0, 1));
    add(NonEmpty(Make("mcp.tools", "MSP_MCP_TOOLS", "--mcp-tools", +[](Settings& o) { return &o.mcp.tools; },
                      "The tools MCP clients are offered: core (memory_write, memory_search, episode_add, "
                      "fact_history), mission (core and the mission tools), graph (core and the knowledge-graph "
                      "tools) or all."),
                 "core|mission|graph|all"));
    add(NonEmpty(Make("mcp.write_source", "MSP_MCP_WRITE_SOURCE", "--mcp-write-source",
                      +[](Settings& o) { return &o.mcp.write_source; },
                      "The source of an MCP memory_write that names none (agent: labelled untrusted where it "
                      "reaches a model, policy.context_trusted_sources).")));
    add(Make("mcp.write_default_tag", "MSP_MCP_WRITE_DEFAULT_TAG", "--mcp-write-default-tag",
             +[](Settings& o) { return &o.mcp.write_default_tag; },
             "The tag an MCP memory_write carrying none of policy.stable_tags gets (empty: none; the write is then "
             "refused by policy.require_stable_tag)."));
    add(NonEmpty(Make("tokens.counter", "MSP_TOKENS_COUNTER", "--tokens-counter",
                      +[](Settings& o) { return &o.tokens.counter; },
                      "Token counter of every budget: auto (cl100k when its vocabulary is found, else estimate), "
                      "cl100k (exact; an error without the vocabulary) or estimate."),
                 "auto|cl100k|estimate"));
    add(Make("tokens.vocabulary_path", "MSP_TOKENS_VOCABULARY_PATH", "--tokens-vocabulary-path",
             +[](Settings& o) { return &o.tokens.vocabulary_path; },
             "js-tiktoken's dist/ranks/cl100k_base.js (empty: where scripts/deps.sh installs it)."));
    // Document ingestion (docs/ingest.md).
    add(Range(Make("ingest.chunk_tokens", "MSP_INGEST_CHUNK_TOKENS", "--ingest-chunk-tokens",
                   +[](Settings& o) { return &o.ingest.chunk_tokens; },
                   "`msp ingest`: at most this many tokens (tokens.counter) per document chunk (64..8192)."),
              64, 8192));
    add(Range(Make("ingest.overlap_tokens", "MSP_INGEST_OVERLAP_TOKENS", "--ingest-overlap-tokens",
                   +[](Settings& o) { return &o.ingest.overlap_tokens; },
                   "`msp ingest`: tokens a chunk repeats from the end of the previous one (0..4095; less than half "
                   "of ingest.chunk_tokens)."),
              0, 4095));
    add(Range(Make("ingest.max_file_bytes", "MSP_INGEST_MAX_FILE_BYTES", "--ingest-max-file-bytes",
                   +[](Settings& o) { return &o.ingest.max_file_bytes; },
                   "`msp ingest`: larger files are reported as failed and skipped (1..4294967296)."),
              1, 4294967296.0));
    add(Range(Make("agent.context_tokens", "MSP_AGENT_CONTEXT_TOKENS", "--agent-context-tokens",
                   +[](Settings& o) { return &o.agent.context_tokens; },
                   "The chat model's context window in tokens (256..10000000)."),
              256, 10000000));
    add(Range(Make("agent.reply_reserve", "MSP_AGENT_REPLY_RESERVE", "--agent-reply-reserve",
                   +[](Settings& o) { return &o.agent.reply_reserve; },
                   "Tokens kept free for the model's reply; the working memory gets context_tokens minus this (>= 0)."),
              0, 10000000));
    add(Range(Make("agent.recent_steps", "MSP_AGENT_RECENT_STEPS", "--agent-recent-steps",
                   +[](Settings& o) { return &o.agent.recent_steps; },
                   "K: the last K steps of the session in the working memory (0..1000)."),
              0, 1000));
    add(Range(Make("agent.top_facts", "MSP_AGENT_TOP_FACTS", "--agent-top-facts",
                   +[](Settings& o) { return &o.agent.top_facts; },
                   "M: facts retrieved for the request (0..1000)."),
              0, 1000));
    add(Range(Make("agent.retrieved_episodes", "MSP_AGENT_RETRIEVED_EPISODES", "--agent-retrieved-episodes",
                   +[](Settings& o) { return &o.agent.retrieved_episodes; },
                   "Older episodes retrieved for the request (0..1000)."),
              0, 1000));
    add(Range(Make("agent.min_score", "MSP_AGENT_MIN_SCORE", "--agent-min-score",
                   +[](Settings& o) { return &o.agent.min_score; },
                   "Retrieved facts and episodes below this score are left out (0..1)."),
              0, 1));
    add(Make("agent.summarise", "MSP_AGENT_SUMMARISE", "--agent-summarise",
             +[](Settings& o) { return &o.agent.summarise; },
             "Over budget, summarise the oldest history with the model instead of only dropping it."));
    add(Range(Make("agent.max_tool_rounds", "MSP_AGENT_MAX_TOOL_ROUNDS", "--agent-max-tool-rounds",
                   +[](Settings& o) { return &o.agent.max_tool_rounds; },
                   "Model calls in one turn before the turn stops without an answer (1..100)."),
              1, 100));
    add(Range(Make("agent.consolidate_every_steps", "MSP_AGENT_CONSOLIDATE_EVERY_STEPS",
                   "--agent-consolidate-every-steps", +[](Settings& o) { return &o.agent.consolidate_every_steps; },
                   "Consolidate the session after this many steps (0: only at session end)."),
              0, 1000000));
    add(Make("agent.mcp_servers", "MSP_AGENT_MCP_SERVERS", "--agent-mcp-servers",
             +[](Settings& o) { return &o.agent.mcp_servers; },
             "External MCP servers over stdio whose tools the agent gets, each NAME=COMMAND [ARG ...]; tools are "
             "named NAME__TOOL."));
    add(Range(Make("agent.mcp_timeout_ms", "MSP_AGENT_MCP_TIMEOUT_MS", "--agent-mcp-timeout-ms",
                   +[](Settings& o) { return &o.agent.mcp_timeout_ms; },
                   "How long one MCP request may take, in ms (1..3600000)."),
              1, 3600000));
    add(Range(Make("agent.core_block_limit", "MSP_AGENT_CORE_BLOCK_LIMIT", "--agent-core-block-limit",
                   +[](Settings& o) { return &o.agent.core_block_limit; },
                   "Limit in characters of a core memory block created without one (1..100000)."),
              1, 100000));
    // Coding agents (docs/coding-agents.md).
    add(Make("capture.repository", "MSP_CAPTURE_REPOSITORY", "--capture-repository",
             +[](Settings& o) { return &o.coding.capture_repository; },
             "The bare git repository `msp capture` stores prompts in (one orphan commit each); empty: "
             "<data_dir>/prompts.git."));
    add(NonEmpty(Make("capture.mode", "MSP_CAPTURE_MODE", "--capture-mode",
                      +[](Settings& o) { return &o.coding.capture_mode; },
                      "spool: the hook writes the prompt to the repository's spool and a detached `msp prompts "
                      "import` commits it (fast); direct: the hook commits it itself."),
                 "spool|direct"));
    add(Make("capture.log_file", "MSP_CAPTURE_LOG_FILE", "--capture-log-file",
             +[](Settings& o) { return &o.coding.capture_log; },
             "Where `msp capture` and the hooks log what went wrong (they never fail the agent); empty: "
             "<data_dir>/capture.log."));
    add(Range(Make("hooks.session_start_budget", "MSP_HOOKS_SESSION_START_BUDGET", "--hooks-session-start-budget",
                   +[](Settings& o) { return &o.coding.session_start_budget; },
                   "Tokens of the digest `msp hook session-start` prints (0..1000000)."),
              0, 1000000));
    add(Make("hooks.post_tool_use", "MSP_HOOKS_POST_TOOL_USE", "--hooks-post-tool-use",
             +[](Settings& o) { return &o.coding.post_tool_use; },
             "Set to false to stop the PostToolUse hooks (msp-capture, `msp hook post-tool-use`) recording tool "
             "observations; left unset, registering the hook is what turns them on."));
    add(Range(Make("hooks.tool_max_chars", "MSP_HOOKS_TOOL_MAX_CHARS", "--hooks-tool-max-chars",
                   +[](Settings& o) { return &o.coding.tool_max_chars; },
                   "Characters kept of a recorded tool call's input and of its response (100..100000)."),
              100, 100000));
    add(Make("hooks.session_summary", "MSP_HOOKS_SESSION_SUMMARY", "--hooks-session-summary",
             +[](Settings& o) { return Ref(&o.coding.session_summary, kModelChoiceNames); },
             "The SessionEnd summary: rules (built in), llm (the rules' summary put in prose by the llm.* "
             "chat model, 6 s at most; the rules' alone when the model fails) or auto (llm when llm.model "
             "is set)."));
    add(Make("prompts.classifier", "MSP_PROMPTS_CLASSIFIER", "--prompts-classifier",
             +[](Settings& o) { return Ref(&o.coding.classifier, kModelChoiceNames); },
             "Intent labels of `msp prompts`: rules (built in), llm (the llm.* chat model) or auto (llm "
             "when llm.model is set)."));
    // The push-refresh orchestrator (docs/orchestrate.md).
    add(Range(Make("orchestrate.interval_s", "MSP_ORCHESTRATE_INTERVAL_S", "--orchestrate-interval-s",
                   +[](Settings& o) { return &o.orchestrate.interval_s; },
                   "`msp orchestrate`: seconds between passes (1..604800)."),
              1, 604800));
    add(Range(Make("orchestrate.commit_weight", "MSP_ORCHESTRATE_COMMIT_WEIGHT", "--orchestrate-commit-weight",
                   +[](Settings& o) { return &o.orchestrate.commit_weight; },
                   "Refresh priority added per commit touching the task since its last refresh (>= 0)."),
              0, kInf));
    add(Range(Make("orchestrate.comment_weight", "MSP_ORCHESTRATE_COMMENT_WEIGHT", "--orchestrate-comment-weight",
                   +[](Settings& o) { return &o.orchestrate.comment_weight; },
                   "Refresh priority added per comment on the task since its last refresh (>= 0)."),
              0, kInf));
    add(Range(Make("orchestrate.pull_weight_per_day", "MSP_ORCHESTRATE_PULL_WEIGHT_PER_DAY",
                   "--orchestrate-pull-weight-per-day", +[](Settings& o) { return &o.orchestrate.pull_weight_per_day; },
                   "Refresh priority added per day since the task's last pull (>= 0)."),
              0, kInf));
    add(Range(Make("orchestrate.threshold", "MSP_ORCHESTRATE_THRESHOLD", "--orchestrate-threshold",
                   +[](Settings& o) { return &o.orchestrate.threshold; },
                   "A task is due at this priority, between the clamps (> 0)."),
              0, kInf, /*lo_open=*/true));
    add(Range(Make("orchestrate.min_interval_h", "MSP_ORCHESTRATE_MIN_INTERVAL_H", "--orchestrate-min-interval-h",
                   +[](Settings& o) { return &o.orchestrate.min_interval_h; },
                   "A task is refreshed at most once in this many hours (24..168 as seed 003 clamps it; 1..8760 "
                   "with orchestrate.interval_override)."),
              1, 8760));
    add(Range(Make("orchestrate.max_interval_h", "MSP_ORCHESTRATE_MAX_INTERVAL_H", "--orchestrate-max-interval-h",
                   +[](Settings& o) { return &o.orchestrate.max_interval_h; },
                   "A LONG-TERM task is refreshed at least once in this many hours (24..168, >= min_interval_h; "
                   "1..8760 with orchestrate.interval_override)."),
              1, 8760));
    add(Make("orchestrate.interval_override", "MSP_ORCHESTRATE_INTERVAL_OVERRIDE", "--orchestrate-interval-override",
             +[](Settings& o) { return &o.orchestrate.interval_override; },
             "Allow orchestrate.min_interval_h / max_interval_h outside seed 003's 24 h .. 7 d clamp (each pass "
             "logs that it runs outside it)."));
    add(Range(Make("orchestrate.max_per_pass", "MSP_ORCHESTRATE_MAX_PER_PASS", "--orchestrate-max-per-pass",
                   +[](Settings& o) { return &o.orchestrate.max_per_pass; },
                   "Refreshes per pass, highest priority first (0: every due task)."),
              0, 100000));
    add(NonEmpty(Make("orchestrate.summarizer", "MSP_ORCHESTRATE_SUMMARIZER", "--orchestrate-summarizer",
                      +[](Settings& o) { return &o.orchestrate.summarizer; },
                      "Executive summaries: extractive (built in), llm (the llm.* chat model) or auto (llm when "
                      "llm.model is set)."),
                 "auto|llm|extractive"));
    add(Make("orchestrate.agent", "MSP_ORCHESTRATE_AGENT", "--orchestrate-agent",
             +[](Settings& o) { return &o.orchestrate.agent; },
             "The agent whose tools the tool-lineage delta follows; empty: every agent of the tenant."));
    add(Make("orchestrate.plane_url", "MSP_ORCHESTRATE_PLANE_URL", "--orchestrate-plane-url",
             +[](Settings& o) { return &o.orchestrate.plane_url; },
             "Plane's base URL (https://api.plane.so or a self-hosted one); set, each pass imports the project's "
             "work items first."));
    add(Make("orchestrate.plane_api_key", "MSP_ORCHESTRATE_PLANE_API_KEY", "--orchestrate-plane-api-key",
             +[](Settings& o) { return &o.orchestrate.plane_api_key; },
             "Plane API key, sent as X-API-Key. Prefer the environment variable to the file or the flag."));
    add(Make("orchestrate.plane_workspace", "MSP_ORCHESTRATE_PLANE_WORKSPACE", "--orchestrate-plane-workspace",
             +[](Settings& o) { return &o.orchestrate.plane_workspace; }, "Plane workspace slug."));
    add(Make("orchestrate.plane_project", "MSP_ORCHESTRATE_PLANE_PROJECT", "--orchestrate-plane-project",
             +[](Settings& o) { return &o.orchestrate.plane_project; }, "Plane project id (a UUID)."));
    add(Make("actor", "MSP_ACTOR", "--actor", +[](Settings& o) { return &o.actor; },
             "Caller identity recorded in the audit log."));
    // A secret: no flag (other users see a command line).
    add(Make("openai_api_key", "OPENAI_API_KEY", "", +[](Settings& o) { return &o.openai_api_key; },
             "The key for https://api.openai.com: sent by embedder.* and llm.* when their base_url is on "
             "api.openai.com and their api_key is empty (never to another server). No flag: set the environment "
             "variable (or the file)."));
    return rows;
  }();
  return table;
}

}  // namespace config_table
}  // namespace msp
