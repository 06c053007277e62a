// Settings: everything the msp programs read — the library's Options
// (include/msp/options.h) and the faces' own settings (the HTTP server, the
// MCP server, ingestion, the coding-agent hooks, the agent loop, the
// orchestrator), which a library user never needs.
//
// Filled once by the config loader (config.h) through the settings table
// (settings_table.cc); the engine takes the Options part.
#ifndef MSP_CONFIG_SETTINGS_H_
#define MSP_CONFIG_SETTINGS_H_

#include <array>
#include <cstddef>
#include <string_view>
#include <string>
#include <vector>

#include "msp/options.h"

namespace msp {

// Whether a coding hook asks the chat model: rules (never), llm (always) or
// auto (when llm.model is set).
enum class ModelChoice { kRules, kLlm, kAuto };
inline constexpr std::array<std::string_view, 3> kModelChoiceNames = {"rules", "llm", "auto"};
constexpr std::string_view NameOf(ModelChoice v) { return kModelChoiceNames[static_cast<size_t>(v)]; }

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
  // Answers of 1 KB or more sent gzip-encoded to clients that accept it:
  // remote (clients not on loopback), all, or off (src/server/content_coding.h).
  std::string compression = "remote";
  // The resident path (docs/cli.md): `msp serve` listens on
  // <data_dir>/msp.sock and msp commands on that directory call it.
  bool local_socket = true;
  // A read-only command that finds no server on the socket answers itself
  // and, when the store has seen at least this many changes (its change
  // sequence), starts one in the background (`msp serve --local-only`),
  // which stops after resident_idle_seconds without a call. 0: never.
  int resident_autostart = 10000;
  int resident_idle_seconds = 600;
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

// Document ingestion (`msp ingest`; docs/ingest.md): how files are cut into
// chunks, counted with the tokens.* counter.
struct IngestOptions {
  int chunk_tokens = 512;                // at most this many tokens per chunk (64..8192)
  int overlap_tokens = 64;               // repeated from the previous chunk (< chunk_tokens / 2)
  size_t max_file_bytes = 64u << 20;     // larger files fail
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
  ModelChoice classifier = ModelChoice::kAuto;       // intent labels (auto: llm when llm.model is set)
  ModelChoice session_summary = ModelChoice::kAuto;  // the SessionEnd summary (the same)
};

struct Settings : Options {
  ServerOptions server;
  McpOptions mcp;
  IngestOptions ingest;
  CodingOptions coding;
  AgentOptions agent;
  OrchestrateOptions orchestrate;
};

}  // namespace msp

#endif  // MSP_CONFIG_SETTINGS_H_
