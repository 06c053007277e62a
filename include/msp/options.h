// Options: every setting msp reads, as typed structs with their defaults.
//
// Filled once from flags, MSP_* environment variables and an optional TOML
// file (see src/config/); the engine never reads configuration elsewhere.
#ifndef MSP_OPTIONS_H_
#define MSP_OPTIONS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace msp {

struct StoreOptions {
  std::string backend = "sqlite";
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
  std::string provider = "hashing";
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
  std::string fusion = "score";
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
  std::string extractor = "rules";       // rules (built in) or llm (LlmOptions)
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

// The MCP server (`msp mcp` on stdio, /mcp of `msp serve`; docs/mcp.md).
struct McpOptions {
  // Origins ("https://app.example.com") /mcp accepts besides loopback ones
  // (http(s)://localhost, 127.0.0.1, [::1] on any port); a request carrying
  // any other Origin header is refused with 403.
  std::vector<std::string> allowed_origins;
  int read_graph_page_size = 100;  // read_graph: entities and relations per page when no limit is given
  int search_nodes_limit = 20;     // search_nodes: entities returned when no limit is given
  // search_nodes drops ranked hits scoring below this (SearchHit::score).
  // With the default weights a hit found by the vector signal alone scores
  // under 0.091, so 0.1 keeps what shares words with the query.
  double search_nodes_min_score = 0.1;
  // Which tools tools/list offers (docs/mcp.md, "Tool profiles"): "core"
  // (memory_write, memory_search, episode_add, fact_history), "mission"
  // (core and the mission tools), "graph" (core and the knowledge-graph
  // tools) or "all".
  std::string tools = "all";
  // memory_write, the agent's face of the write policy: a call naming no
  // source is stored with write_source (not in
  // policy.context_trusted_sources by default, so labelled untrusted where
  // it reaches a model); a call carrying none of policy.stable_tags gets
  // write_default_tag ("": none, the write is refused as any other).
  std::string write_source = "agent";
  std::string write_default_tag = "note";
};

// The HTTP server of `msp serve`: REST under /v1, MCP at /mcp (docs/rest.md).
struct ServerOptions {
  std::string bind = "127.0.0.1";        // listen address; loopback by default
  int port = 8420;                       // 0: any free port (printed at start)
  int threads = 0;                       // worker threads answering requests; 0: max(8, 4 x cores)
  size_t max_body_bytes = 4u << 20;      // larger request bodies get 413
  // API keys, each "KEY=TENANT"; a key reads and writes only its tenant.
  std::vector<std::string> api_keys;
  std::string api_keys_file;             // one "KEY TENANT" a line; # comments
  // With no keys configured: serve every request as tenant "default"
  // (loopback bind only). Off: `msp serve` refuses to start without keys.
  bool allow_anonymous = false;
  bool access_log = true;                // one JSON line per request on stderr
  // The resident path (docs/cli.md): `msp serve` listens on
  // <data_dir>/msp.sock and msp commands on that directory call it.
  bool local_socket = true;
  int stats_cache_ms = 5000;             // /metrics reuses record counts this long
  // Slow clients (docs/rest.md, "Limits"): a request's line and headers
  // must arrive within header_timeout_ms, its body within body_timeout_ms
  // of them (else 408); requests are read whole before a worker takes them.
  int header_timeout_ms = 10000;
  int body_timeout_ms = 30000;
  // Open connections, in all and from one address; past a cap, the oldest
  // connection not being answered is closed to make room (else 503).
  int max_connections = 512;
  int max_connections_per_client = 64;
  int max_queued_requests = 256;         // complete requests waiting for a worker; past it 503
  // Cross-site requests and DNS rebinding (docs/rest.md, "Browsers"): Host
  // names accepted besides the bind address (and, on loopback, localhost);
  // Origins the REST routes accept besides loopback ones. Other Hosts and
  // Origins get 403.
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
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

// Document ingestion (`msp ingest`; docs/ingest.md): how files are cut into
// chunks, counted with the tokens.* counter.
struct IngestOptions {
  int chunk_tokens = 512;                // at most this many tokens per chunk (64..8192)
  int overlap_tokens = 64;               // repeated from the previous chunk (< chunk_tokens / 2)
  size_t max_file_bytes = 64u << 20;     // larger files fail
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

// The push-refresh orchestrator (`msp orchestrate`); docs/orchestrate.md.
struct OrchestrateOptions {
  int interval_s = 3600;                 // between passes
  double commit_weight = 0.25;           // priority per commit touching the task
  double comment_weight = 0.25;          // priority per new comment
  double pull_weight_per_day = 0.1;      // priority per day since the last pull
  double threshold = 1.0;                // due at this priority (between the clamps)
  int min_interval_h = 24;               // never refreshed more often
  int max_interval_h = 168;              // always refreshed at least this often
  // Seed 003 clamps refreshes between once per 24 h and once per 7 days;
  // intervals outside it are refused unless this is set (and then logged).
  bool interval_override = false;
  int max_per_pass = 0;                  // 0: every due task
  std::string summarizer = "auto";       // auto | llm | extractive
  std::string agent;                     // tool lineage of this agent ("": every agent)
  std::string plane_url;                 // Plane to poll for tasks each pass ("": none)
  std::string plane_api_key;
  std::string plane_workspace;
  std::string plane_project;
};

// The agent loop (`msp agent`) and the working memory assembled for each
// model call (also `msp context`); docs/agent.md.
struct AgentOptions {
  int context_tokens = 8192;             // the model's context window
  int reply_reserve = 1024;              // kept free for the model's reply
  int recent_steps = 10;                 // K: the last K steps of the session
  int top_facts = 8;                     // M: facts retrieved for the request
  int retrieved_episodes = 5;            // older episodes retrieved for the request
  double min_score = 0.0;                // retrieval min_score for facts and episodes
  // Over budget with a model configured: summarise the oldest history
  // instead of dropping it.
  bool summarise = true;
  int max_tool_rounds = 8;               // model calls in one turn before it stops
  // Consolidate the session after every N steps (0: only at session end).
  int consolidate_every_steps = 20;
  // External MCP servers over stdio, each "NAME=COMMAND [ARG ...]".
  std::vector<std::string> mcp_servers;
  int mcp_timeout_ms = 30000;            // one MCP request (initialize, tools/list, tools/call)
  size_t core_block_limit = 2000;        // characters per core memory block
};

// msp as a coding agent's memory (docs/coding-agents.md): `msp capture`, the
// Claude Code hooks and `msp prompts`.
struct CodingOptions {
  std::string capture_repository;        // the prompt repository; empty: <data_dir>/prompts.git
  std::string capture_mode = "spool";    // spool (hook spools, a detached importer commits) | direct
  std::string capture_log;               // where capture failures go; empty: <data_dir>/capture.log
  int session_start_budget = 1500;       // tokens of the SessionStart context (index, prompts, digest)
  bool post_tool_use = false;            // `msp hook post-tool-use` records tool calls as episodes
  size_t tool_max_chars = 2000;          // characters kept of a tool call's input and of its response
  std::string classifier = "auto";       // intent labels: rules | llm | auto (llm when llm.model is set)
  std::string session_summary = "auto";  // SessionEnd summary: rules | llm | auto (llm when llm.model is set)
};

struct Options {
  StoreOptions store;
  EmbedderOptions embedder;
  WritePolicyOptions policy;
  RetrievalOptions retrieval;
  FactOptions facts;
  ConsolidationOptions consolidation;
  LlmOptions llm;
  ServerOptions server;
  McpOptions mcp;
  MissionOptions mission;
  IngestOptions ingest;
  CodingOptions coding;
  TokenOptions tokens;
  AgentOptions agent;
  OrchestrateOptions orchestrate;
  std::string actor;                     // default caller identity for the audit log
};

}  // namespace msp

#endif  // MSP_OPTIONS_H_
