// The memory model: one record type, Memory, and the small value types around it.
//
// Every timestamp is milliseconds since the Unix epoch, UTC; 0 means "unset".
// Bodies are JSON text (the public API carries no third-party types).
#ifndef MSP_TYPES_H_
#define MSP_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msp {

using TimeMs = int64_t;

enum class Kind {
  kEpisode, kFact, kProcedure, kDecision, kCorrection, kDocumentChunk, kArtifact,
  kPrinciple,  // a mission's principle (registry, versioned)
  kEntity,     // a knowledge-graph node (name, type, observations)
  kRelation,   // a knowledge-graph edge (from, to, relation type)
  kEvent,      // something that happened in a mission (incident, alert, retrieval log...)
};
// The highest access level (Memory::access_level) and clearance.
constexpr int kMaxAccessLevel = 9;
enum class Layer { kEpisodic, kSemantic, kProcedural, kDomain, kWorkflow, kPractitioner };
enum class Sensitivity { kLow, kMedium, kHigh };
enum class Criticality { kLow, kNormal, kHigh, kCritical };
// A record is active until an explicit supersede replaces it; superseded
// records stay readable in history but are not retrieved by default.
enum class RecordState { kActive, kSuperseded };
enum class EpisodeType { kUserMessage, kAgentResponse, kToolCall, kToolResult, kObservation };

// Canonical lowercase names ("episode", "document_chunk", "user_message").
std::string_view KindName(Kind k);
std::string_view LayerName(Layer l);
std::string_view SensitivityName(Sensitivity s);
std::string_view CriticalityName(Criticality c);
std::string_view RecordStateName(RecordState s);
std::string_view EpisodeTypeName(EpisodeType t);
// Parsers accept exactly the canonical names; nullopt otherwise.
std::optional<Kind> ParseKind(std::string_view s);
// Every kind, in declaration order.
std::vector<Kind> AllKinds();
std::optional<Layer> ParseLayer(std::string_view s);
std::optional<Sensitivity> ParseSensitivity(std::string_view s);
std::optional<Criticality> ParseCriticality(std::string_view s);
std::optional<RecordState> ParseRecordState(std::string_view s);
std::optional<EpisodeType> ParseEpisodeType(std::string_view s);
// The layer a kind lives in when the caller does not say (episode -> episodic,
// fact -> semantic, procedure -> procedural, document_chunk -> domain,
// decision/artifact/principle/event -> workflow, correction -> practitioner,
// entity/relation -> semantic).
Layer DefaultLayer(Kind k);

// Who a record belongs to. tenant is always set ("default" when not given);
// the other parts are optional. A record is visible to a query scope when the
// tenant is equal and every non-empty part of the scope equals the record's.
struct Namespace {
  std::string tenant = "default";
  std::string user;
  std::string agent;
  std::string session;
  std::string mission;
  std::string operator_id;

  bool operator==(const Namespace&) const = default;
  // True when a record in `record` is visible to this scope (see above).
  bool Contains(const Namespace& record) const;
  // "tenant=default/user=ann/session=s1": stable, for logs and messages.
  std::string ToString() const;
};

// A pointer from a record to where it came from: another record ("episode",
// id), a commit ("commit", hash), an issue, a URL, a document page.
struct ProvenanceRef {
  std::string type;   // episode, fact, commit, issue, url, document, import, ...
  std::string ref;    // the id, hash or address
  std::string detail; // optional: page, section, line, note
  bool operator==(const ProvenanceRef&) const = default;
};

struct Memory {
  std::string id;  // UUID (v7, time-ordered)
  Namespace ns;
  Layer layer = Layer::kSemantic;
  Kind kind = Kind::kFact;
  std::string text;               // what is indexed and returned
  std::string body_json = "{}";   // typed JSON body (an object), per kind
  std::vector<std::string> tags;
  std::string source;             // user, tool, policy, consolidation, import...
  Sensitivity sensitivity = Sensitivity::kLow;
  Criticality criticality = Criticality::kNormal;
  double confidence = 1.0;        // 0..1
  TimeMs created_at = 0;          // when msp learned it
  TimeMs updated_at = 0;
  TimeMs expires_at = 0;          // 0: never expires
  TimeMs valid_at = 0;            // when it started to hold in the world (0: unknown)
  TimeMs invalid_at = 0;          // when it stopped holding (0: still holds)
  int64_t access_count = 0;
  TimeMs last_accessed = 0;
  std::vector<ProvenanceRef> provenance;
  // 0..kMaxAccessLevel: served only to askers whose clearance is at least
  // this (SearchFilter::max_access_level). 0: everyone in the namespace.
  int access_level = 0;
  RecordState state = RecordState::kActive;
  std::string supersedes;         // id of the record this one replaced
  std::string superseded_by;      // id of the record that replaced this one
  // Episodes only: the step's position in its session (ns.session).
  int64_t step_number = 0;
  // The vector and the embedder that made it ("hashing-384"); empty if none.
  std::vector<float> embedding;
  std::string embedder_id;
  // The change-sequence number of the last change to this record (read-only;
  // assigned by the store).
  int64_t seq = 0;

  bool operator==(const Memory&) const = default;
};

// One step of an agent session (seed 000, 2.1).
struct EpisodeStep {
  Namespace ns;                 // ns.session is the session id (required)
  int64_t step_number = 0;      // 0: next after the session's last step
  EpisodeType type = EpisodeType::kUserMessage;
  std::string content_json;     // JSON object, e.g. {"text": "..."}; or
  std::string text;             // plain text, used when content_json is empty
  std::string tool_name;
  int64_t duration_ms = 0;
  int64_t token_count = 0;
  TimeMs timestamp = 0;         // 0: now
  std::vector<std::string> tags;
  Sensitivity sensitivity = Sensitivity::kLow;
  std::string source = "agent";
  std::string actor;            // who asked, for the audit log
  // An idempotency key, as WriteRequest::request_id: a repeat of the same
  // step with the same key in the same tenant (within
  // store.idempotency_ttl_hours) answers the first step's record and adds
  // nothing; the same key with another step is a Conflict. Empty: none.
  std::string request_id;
};

// A general write through the write policy (seed 004).
struct WriteRequest {
  Namespace ns;
  Kind kind = Kind::kFact;
  std::optional<Layer> layer;   // default: DefaultLayer(kind)
  std::string text;
  std::string body_json;        // empty: "{}"
  std::vector<std::string> tags;
  std::string source = "user";
  Sensitivity sensitivity = Sensitivity::kLow;
  Criticality criticality = Criticality::kNormal;
  double confidence = 1.0;
  int ttl_days = 0;             // 0: the configured default (none unless set)
  TimeMs valid_at = 0;
  std::vector<ProvenanceRef> provenance;
  std::string actor;            // who asked, for the audit log
  // An idempotency key (--request-id, Idempotency-Key, request_id): a
  // repeat with the same key in the same tenant within
  // store.idempotency_ttl_hours answers the first result and writes
  // nothing; the same key with another request is a Conflict. Only for a
  // write on its own (WriteMany of one request). Empty: none.
  std::string request_id;
};

struct WriteResult {
  std::string id;                        // the stored (or merged-into) record
  bool merged = false;                   // a near-duplicate fact was updated instead
  std::vector<std::string> evicted_ids;  // records evicted by the per-user limit
};

// A durable fact (seed 000, 2.2). Within dedup_cosine of an existing active
// fact in the same namespace it updates that fact instead of adding one.
struct FactRequest {
  Namespace ns;
  std::string text;
  double confidence = 1.0;
  std::vector<std::string> source_episodes;  // episode ids
  std::vector<std::string> tags;
  std::string source = "user";
  Sensitivity sensitivity = Sensitivity::kLow;
  Criticality criticality = Criticality::kNormal;
  TimeMs valid_at = 0;
  std::vector<ProvenanceRef> provenance;
  std::string actor;
};

// What retrieval may return. Empty vectors mean "any".
struct SearchFilter {
  std::vector<Kind> kinds;
  std::vector<Layer> layers;
  std::vector<std::string> tags;     // a record matches when it has any of them
  std::vector<std::string> sources;
  std::vector<Criticality> criticalities;
  TimeMs created_from = 0;           // inclusive; 0: unbounded
  TimeMs created_to = 0;             // exclusive; 0: unbounded
  bool include_superseded = false;
  // The asker's clearance: records with a higher access_level are never
  // returned. nullopt: no limit (a trusted local caller).
  std::optional<int> max_access_level;
};

struct RetrieveRequest {
  Namespace scope;
  std::string query;
  int top_k = 10;
  double min_score = 0.0;            // on the scale of SearchHit::score (retrieval.scores)
  // Sessions to rank beside the hits (MemoryLayer::Search,
  // RetrieveResult::sessions); 0: none. Retrieve ignores it.
  int top_sessions = 5;
  // > 0: each hit of an episode in a session also carries the steps up to
  // this many before and after it (SearchHit::context), so an answer's
  // neighbouring turns come as its context instead of taking hits' places.
  int context_steps = 0;
  SearchFilter filter;
  bool explain = false;
  bool record_access = true;         // bump access_count / last_accessed
  // The query's vector, when the caller already has it (from the same
  // embedder); empty: the engine embeds `query`.
  std::vector<float> query_embedding;
  // > 0: what held at this time (ms), superseded records included: a record
  // held from valid_at (else created_at) until invalid_at (else, if it was
  // superseded, until then; else still). "What did we believe on date D".
  TimeMs as_of = 0;
};

// One signal's part in a hit's score (filled when explain is set).
struct SignalContribution {
  std::string signal;   // "bm25", "cosine"
  int rank = 0;         // 1-based rank in that signal; 0: not found by it
  double raw = 0.0;     // the signal's own score (BM25 weight, cosine)
  double contribution = 0.0;  // what it added to the fused score
};

struct SearchHit {
  Memory memory;
  // On [0, 1]. With retrieval.scores "calibrated" (the default), the
  // relative score below mapped through a curve fitted against relevance
  // (RetrievalOptions::scores): the same order, comparable across queries.
  // The relative score: with retrieval.fusion "score" (the default) the weighted
  // mean of the lexical score over the query's best and the cosine (clipped
  // at 0): the best lexical hit with cosine c scores (1 + 0.1 c) / 1.1 with
  // the default weights, a hit of the vector signal alone at most 0.1/1.1.
  // With "rrf", weighted reciprocal-rank fusion: 1.0 is first in every
  // signal; first in one signal only is that signal's share of the weights.
  // The lexical signal ranks by BM25 with episode context (the neighbouring
  // steps and the session, RetrievalOptions); explain then splits its
  // contribution into "bm25", "neighbours" and "session" in proportion to
  // their parts, so the explain entries always sum to the score.
  double score = 0.0;
  std::vector<SignalContribution> explain;
  // What the hit shows of its record when that is not the whole text: a
  // record longer than retrieval.passage_bytes is indexed as passages and
  // its hit shows the passage that matched; any hit shows at most
  // retrieval.max_tokens_per_hit tokens, cut around where it matched.
  // [passage_begin, passage_end) are byte offsets into memory.text, which
  // the library leaves whole; the faces serve the passage as the hit's text
  // with its offsets (the whole record: msp get <id>, GET /v1/memories/<id>,
  // MCP memory_get). Empty, with both offsets 0: the hit shows the whole text.
  std::string passage;
  int64_t passage_begin = 0;
  int64_t passage_end = 0;
  // With RetrieveRequest::context_steps: the episodes of the hit's session
  // within that many steps of it, in step order, each shown as a hit is
  // (passage, max_tokens_per_hit; score 0): those the query may see that
  // are not hits themselves (a hit is not repeated as another's context).
  std::vector<SearchHit> context;
};

// One session of a search's session ranking (RetrieveResult::sessions):
// which conversations the query is about, as opposed to which steps to
// show. A session's score is how well it matches as a whole: the session
// BM25 of its episodes that share the query's words (taken together as one
// document) over the query's best, mixed with its best episode's own score
// (RetrievalOptions::session_mix). Only episodes the query may see count.
struct SessionHit {
  Namespace ns;         // the session's namespace (ns.session names it)
  double score = 0.0;   // on [0, 1]; 1: the best session of the query
  std::string best_id;  // its episode that matches the query best
};

// MemoryLayer::Search's answer: the hits, each ranked by its own match with
// its context as a bounded prior, and beside them the session ranking.
struct RetrieveResult {
  std::vector<SearchHit> hits;       // best first, at most top_k
  std::vector<SessionHit> sessions;  // best first, at most top_sessions
};

// A page of the store's change sequence with the current state of the
// records it names (MemoryLayer::ChangesSince), for parts of msp that keep a
// view derived from records (the knowledge graph's).
struct RecordChanges {
  int64_t up_to = 0;              // seq of the page's last change (`after` when there was none)
  bool more = false;              // the page was full: more changes may follow up_to
  std::vector<Memory> records;    // changed records that exist and lie in scope, without vectors
  std::vector<std::string> gone;  // ids of changed records of the scope's tenant that no longer exist
};

enum class AuditAction { kWrite, kRefuse, kUpdate, kMerge, kSupersede, kDelete, kEvict, kImport };
std::string_view AuditActionName(AuditAction a);
std::optional<AuditAction> ParseAuditAction(std::string_view s);

struct AuditEvent {
  int64_t seq = 0;         // assigned by the store
  TimeMs at = 0;
  std::string actor;       // caller identity when known
  AuditAction action = AuditAction::kWrite;
  std::string record_id;   // empty for a refusal
  std::string tenant;
  std::string reason;
  std::string details_json = "{}";
};

struct ConsolidationReport {
  int episodes_read = 0;
  int candidates = 0;
  int facts_added = 0;
  int facts_merged = 0;
  int facts_superseded = 0;           // new facts that replaced a fact they contradict
  std::vector<std::string> fact_ids;  // added, merged or superseding, in order
};

struct ImportReport {
  int lines = 0;
  int applied = 0;
  // Lines whose text was over policy.max_record_bytes, with
  // policy.on_oversize "split" (stored as several records) or "truncate".
  int split = 0;
  int truncated = 0;
};

struct Stats {
  int64_t records = 0;
  int64_t active = 0;
  int64_t expired = 0;
  std::vector<std::pair<std::string, int64_t>> by_kind;
  std::vector<std::pair<std::string, int64_t>> by_layer;  // layers holding records, by LayerName
  int64_t last_seq = 0;
  int64_t lexical_applied_seq = 0;
  int64_t vector_applied_seq = 0;
  // The vector index: rows, and of them those placed in its graph (the
  // approximate search of large layers) and those waiting to be (scanned
  // exactly meanwhile). Both 0 below the graph's threshold.
  int64_t vector_rows = 0;
  int64_t vector_graph_placed = 0;
  int64_t vector_graph_pending = 0;
  // Derived indexes found damaged (unreadable files, a torn or garbled
  // vector file) and rebuilt from the store since the engine was opened.
  int64_t lexical_rebuilds = 0;
  int64_t vector_rebuilds = 0;
  int64_t audit_events = 0;
  std::string embedder_id;
  std::string store_path;
};

}  // namespace msp

#endif  // MSP_TYPES_H_
