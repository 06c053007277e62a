// The REST API over real sockets (the fixture is rest_fixture.h): auth,
// tenant isolation, bodies, limits, metrics, the OpenAPI document, every
// operation, logs, anonymous mode, as_of. (rest_http_clients_test.cc: browser
// attacks, concurrent writer processes, more clients than server threads.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "codec/memory_json.h"
#include "msp/memory.h"
#include "rest/rest_api.h"
#include "server/http_server.h"
#include "tests/http/rest_fixture.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RestHttpTest : public RestFixture {};

TEST_F(RestHttpTest, HealthzNeedsNoKeyEverythingElseDoes) {
  Answer health = Get("/healthz", "");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.j["status"], "ok");

  for (const char* path : {"/metrics", "/openapi.json", "/v1/memories", "/v1/stats", "/v1/audit", "/v1/export"}) {
    Answer a = Get(path, "");
    EXPECT_EQ(a.status, 401) << path;
    EXPECT_EQ(a.ErrorCode(), "unauthorized") << path << " " << a.body;
    EXPECT_EQ(a.Header("WWW-Authenticate"), "Bearer");
  }
  EXPECT_EQ(Get("/v1/memories", "wrong-key-0123456789").status, 401);
  EXPECT_EQ(Get("/v1/memories", kKeyA + "x").status, 401);
  EXPECT_EQ(From(client_->Get("/v1/memories", {{"X-API-Key", "wrong-key-0123456789"}})).status, 401);
  EXPECT_EQ(From(client_->Get("/v1/memories", {{"Authorization", "Basic " + kKeyA}})).status, 401);

  // A write without a key or with a bad one stores nothing.
  const json write = {{"text", "The user prefers dark mode in every editor"}, {"tags", {"preference"}}};
  EXPECT_EQ(PostJson("/v1/memories", "", write).status, 401);
  EXPECT_EQ(PostJson("/v1/memories", "bad-key-0123456789ab", write).status, 401);
  EXPECT_EQ(CountRecords(kKeyA), 0u);

  // Good keys: Bearer (any case of the scheme) and X-API-Key; both of alpha's keys see one tenant.
  EXPECT_EQ(PostJson("/v1/memories", kKeyA, write).status, 201);
  Answer via_header = From(client_->Post("/v1/memories", {{"X-API-Key", kKeyA2}},
                                         json{{"text", "The user prefers tabs over spaces in Go"},
                                              {"tags", {"preference"}}}
                                             .dump(),
                                         "application/json"));
  EXPECT_EQ(via_header.status, 201) << via_header.body;
  Answer lower = From(client_->Get("/v1/memories", {{"Authorization", "bearer " + kKeyA}}));
  EXPECT_EQ(lower.status, 200);
  EXPECT_EQ(lower.j["memories"].size(), 2u);
  EXPECT_EQ(CountRecords(kKeyA2), 2u);
  EXPECT_EQ(CountRecords(kKeyB), 0u);
}

TEST_F(RestHttpTest, UnknownRouteIs404AndWrongMethodIs405) {
  EXPECT_EQ(Get("/v1/nothing", "").status, 401);  // no route is confirmed without a key
  Answer unknown = Get("/v1/nothing", kKeyA);
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.ErrorCode(), "not_found");
  EXPECT_EQ(Get("/v2/memories", kKeyA).status, 404);
  EXPECT_EQ(Get("/v1/memories/a/b/c", kKeyA).status, 404);

  Answer put = From(client_->Put("/v1/memories", Auth(kKeyA), "{}", "application/json"));
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.ErrorCode(), "method_not_allowed");
  EXPECT_NE(put.Header("Allow").find("GET"), std::string::npos) << put.Header("Allow");
  EXPECT_NE(put.Header("Allow").find("POST"), std::string::npos);
  Answer del = Delete("/v1/search", kKeyA);
  EXPECT_EQ(del.status, 405);
  EXPECT_EQ(del.Header("Allow"), "POST");
  EXPECT_EQ(Get("/v1/search", kKeyA).status, 405);

  Answer missing = Get("/v1/memories/01900000-0000-7000-8000-000000000000", kKeyA);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.ErrorCode(), "not_found");
}

TEST_F(RestHttpTest, TenantIsolation) {
  const std::string decision = WriteDecision(kKeyA, "Alpha decided to keep the ledger in SQLite forever");
  Answer fact = PostJson("/v1/facts", kKeyA, {{"text", "Alpha's ledger lives on the pumpkin server in Oslo"}});
  ASSERT_EQ(fact.status, 201) << fact.body;
  const std::string fact_id = fact.j["id"];
  Answer episode = PostJson("/v1/episodes", kKeyA,
                            {{"namespace", {{"session", "s-alpha"}}}, {"text", "alpha asked about the pumpkin server"}});
  ASSERT_EQ(episode.status, 201) << episode.body;
  const std::string episode_id = episode.j["id"];
  const std::vector<std::string> alpha_ids = {decision, fact_id, episode_id};

  // By id: get, history, delete, supersede.
  for (const std::string& id : alpha_ids) {
    EXPECT_EQ(Get("/v1/memories/" + id, kKeyB).status, 404) << id;
    EXPECT_EQ(Get("/v1/memories/" + id + "/history", kKeyB).status, 404) << id;
    EXPECT_EQ(Delete("/v1/memories/" + id, kKeyB).status, 404) << id;
    EXPECT_EQ(Get("/v1/memories/" + id, kKeyA).status, 200) << id;  // still there
  }
  Answer supersede = PostJson("/v1/facts/" + fact_id + "/supersede", kKeyB,
                              {{"text", "Beta says the ledger lives somewhere else entirely"}});
  EXPECT_EQ(supersede.status, 404) << supersede.body;
  EXPECT_EQ(Get("/v1/memories/" + fact_id + "/history", kKeyA).j["versions"].size(), 1u);

  // By list, search, steps, stats, export, audit.
  EXPECT_EQ(CountRecords(kKeyB), 0u);
  EXPECT_EQ(CountRecords(kKeyA), 3u);
  const json search = {{"query", "pumpkin server ledger SQLite"}, {"top_k", 50}};
  EXPECT_EQ(PostJson("/v1/search", kKeyB, search).j["hits"].size(), 0u);
  EXPECT_EQ(PostJson("/v1/search", kKeyB, search).j["sessions"].size(), 0u);
  const Answer found = PostJson("/v1/search", kKeyA, search);
  EXPECT_GE(found.j["hits"].size(), 2u);
  // Beside the hits, the sessions the query is about: alpha's one session.
  ASSERT_EQ(found.j["sessions"].size(), 1u) << found.body;
  EXPECT_EQ(found.j["sessions"][0]["namespace"]["session"], "s-alpha");
  EXPECT_EQ(found.j["sessions"][0]["best_id"], episode_id);
  EXPECT_EQ(found.j["sessions"][0]["score"], 1.0);
  EXPECT_EQ(Get("/v1/sessions/s-alpha/steps", kKeyB).j["steps"].size(), 0u);
  EXPECT_EQ(Get("/v1/sessions/s-alpha/steps", kKeyA).j["steps"].size(), 1u);
  EXPECT_EQ(Get("/v1/stats", kKeyB).j["records"], 0);
  EXPECT_EQ(Get("/v1/stats", kKeyA).j["records"], 3);
  Answer export_b = Get("/v1/export", kKeyB);
  EXPECT_EQ(export_b.status, 200);
  EXPECT_EQ(export_b.body, "");
  Answer export_a = Get("/v1/export", kKeyA);
  EXPECT_EQ(std::count(export_a.body.begin(), export_a.body.end(), '\n'), 3);
  Answer audit_b = Get("/v1/audit?limit=1000", kKeyB);
  ASSERT_EQ(audit_b.status, 200);
  for (const json& e : audit_b.j["events"]) {
    EXPECT_EQ(e["tenant"], "beta");
    for (const std::string& id : alpha_ids) EXPECT_NE(e["record_id"], id);
  }
  EXPECT_EQ(Get("/v1/audit?record_id=" + decision, kKeyB).j["events"].size(), 0u);
  EXPECT_GE(Get("/v1/audit?record_id=" + decision, kKeyA).j["events"].size(), 1u);

  // Naming alpha with beta's key is 403, and nothing is written anywhere.
  auto forbidden = [&](const Answer& a, const std::string& what) {
    EXPECT_EQ(a.status, 403) << what << ": " << a.body;
    EXPECT_EQ(a.ErrorCode(), "forbidden") << what;
  };
  forbidden(PostJson("/v1/memories", kKeyB,
                     {{"text", "Beta tries to write into alpha's memory"}, {"tags", {"goal"}},
                      {"namespace", {{"tenant", "alpha"}}}}),
            "write");
  forbidden(PostJson("/v1/memories", kKeyB,
                     {{"memories",
                       {{{"text", "Beta writes a harmless batch item"}, {"tags", {"goal"}}},
                        {{"text", "Beta smuggles this one into alpha"}, {"tags", {"goal"}},
                         {"namespace", {{"tenant", "alpha"}}}}}}}),
            "batch");
  forbidden(PostJson("/v1/search", kKeyB, {{"query", "pumpkin"}, {"namespace", {{"tenant", "alpha"}}}}), "search");
  forbidden(PostJson("/v1/facts", kKeyB, {{"text", "Beta fact for alpha"}, {"namespace", {{"tenant", "alpha"}}}}),
            "fact");
  forbidden(PostJson("/v1/episodes", kKeyB,
                     {{"text", "beta step"}, {"namespace", {{"tenant", "alpha"}, {"session", "s-alpha"}}}}),
            "episode");
  forbidden(Get("/v1/memories?tenant=alpha", kKeyB), "list");
  forbidden(Get("/v1/memories/" + decision + "?tenant=alpha", kKeyB), "get");
  forbidden(Get("/v1/export?tenant=alpha", kKeyB), "export");
  forbidden(Get("/v1/audit?tenant=alpha", kKeyB), "audit");
  forbidden(Post("/v1/import", kKeyB, export_a.body, "application/x-ndjson"), "import of alpha's export");
  EXPECT_EQ(CountRecords(kKeyB), 0u);
  EXPECT_EQ(CountRecords(kKeyA), 3u);

  // Naming one's own tenant is fine; an import without tenants lands in the key's.
  Answer own = PostJson("/v1/memories", kKeyB,
                        {{"text", "Beta writes into its own memory"}, {"tags", {"goal"}},
                         {"namespace", {{"tenant", "beta"}}}});
  EXPECT_EQ(own.status, 201) << own.body;
  EXPECT_EQ(Get("/v1/memories/" + own.j["id"].get<std::string>(), kKeyA).status, 404);
  Answer imported = Post("/v1/import", kKeyB, R"({"text": "Imported into beta without naming a tenant"})" "\n",
                         "application/x-ndjson");
  EXPECT_EQ(imported.status, 200) << imported.body;
  EXPECT_EQ(imported.j["applied"], 1);
  EXPECT_EQ(CountRecords(kKeyB), 2u);
  EXPECT_EQ(CountRecords(kKeyA), 3u);
  // A line with alpha's record id is answered as one with an unknown id (no
  // existence oracle across tenants): both land in beta, alpha's is untouched.
  const Answer alpha_before = Get("/v1/memories/" + decision, kKeyA);
  Answer foreign = Post("/v1/import", kKeyB,
                        R"({"id": ")" + decision + R"(", "text": "Beta probes for an id of alpha"})" "\n",
                        "application/x-ndjson");
  Answer unknown = Post("/v1/import", kKeyB,
                        R"({"id": "0190e5c2-0000-7000-8000-00000000c0de", "text": "Beta probes for an id of alpha"})"
                        "\n",
                        "application/x-ndjson");
  EXPECT_EQ(foreign.status, 200) << foreign.body;
  EXPECT_EQ(foreign.status, unknown.status);
  EXPECT_EQ(foreign.body, unknown.body);
  EXPECT_EQ(Get("/v1/memories/" + decision, kKeyA).body, alpha_before.body);
  EXPECT_EQ(CountRecords(kKeyB), 4u);
  EXPECT_EQ(CountRecords(kKeyA), 3u);

  // /metrics shows only the caller's record counts.
  Answer metrics_b = Get("/metrics", kKeyB);
  EXPECT_NE(metrics_b.body.find("msp_records_active{tenant=\"beta\"} 4"), std::string::npos) << metrics_b.body;
  EXPECT_EQ(metrics_b.body.find("tenant=\"alpha\""), std::string::npos);
}

// Idempotency-Key: a repeat answers the first result (201, the same body)
// and writes nothing; the key with another body is 409 and writes nothing;
// another tenant's key of the same name is its own; a batch takes none.
TEST_F(RestHttpTest, IdempotencyKeyAnswersARepeatWithTheFirstResult) {
  auto post = [&](const std::string& key, const std::string& idem, const json& body) {
    return From(client_->Post("/v1/memories", Auth(key, {{"Idempotency-Key", idem}}), body.dump(), "application/json"));
  };
  const json body = {{"text", "Alpha keeps the nightly backups for thirty days"}, {"tags", {"constraint"}}};
  Answer first = post(kKeyA, "req-0001", body);
  ASSERT_EQ(first.status, 201) << first.body;
  const size_t count = CountRecords(kKeyA);
  Answer repeat = post(kKeyA, "req-0001", body);
  EXPECT_EQ(repeat.status, 201) << repeat.body;
  EXPECT_EQ(repeat.body, first.body);
  EXPECT_EQ(CountRecords(kKeyA), count);

  json other = body;
  other["text"] = "Alpha keeps the nightly backups for ninety days";
  Answer conflict = post(kKeyA, "req-0001", other);
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_NE(conflict.body.find("req-0001"), std::string::npos) << conflict.body;
  EXPECT_EQ(CountRecords(kKeyA), count);

  Answer beta = post(kKeyB, "req-0001", body);
  EXPECT_EQ(beta.status, 201) << beta.body;
  EXPECT_NE(beta.j.value("id", ""), first.j.value("id", ""));
  EXPECT_EQ(CountRecords(kKeyA), count);

  Answer batch = post(kKeyA, "req-0002", {{"memories", {body}}});
  EXPECT_EQ(batch.status, 400) << batch.body;
  Answer bad = post(kKeyA, "two words", body);
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(CountRecords(kKeyA), count);
}

TEST_F(RestHttpTest, MalformedBodiesAndWrongTypesAre400AndStoreNothing) {
  struct Case {
    std::string path;
    std::string body;
    std::string names;  // a part of the error message
  };
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 100; ++i) deep += "}";
  const std::vector<Case> cases = {
      {"/v1/memories", "{not json", "the body"},
      {"/v1/memories", "[1, 2]", "object"},
      {"/v1/memories", "", "JSON object body"},
      {"/v1/memories", "\"just a string\"", "object"},
      {"/v1/memories", deep, "the body"},
      {"/v1/memories", "{\"text\": \"bad \xff\xfe utf8 in a long enough text\", \"tags\": [\"goal\"]}", "the body"},
      {"/v1/memories", R"({"text": 5})", "field 'text' must be a string"},
      {"/v1/memories", R"({"text": "A long enough text for the policy", "confidence": "high"})", "'confidence'"},
      {"/v1/memories", R"({"text": "A long enough text for the policy", "colour": "red"})", "unknown field 'colour'"},
      {"/v1/memories", R"({"text": "A long enough text for the policy", "kind": "thought"})", "unknown value 'thought'"},
      {"/v1/memories", R"({"text": "A long enough text for the policy", "tags": "goal"})", "'tags'"},
      {"/v1/memories", R"({"memories": []})", "'memories'"},
      {"/v1/memories", R"({"memories": [{"text": 1}]})", "memories[0].text"},
      {"/v1/memories", R"({"text": "x", "namespace": {"tenant": 7}})", "namespace.tenant"},
      {"/v1/search", R"({"query": "x", "top_k": "ten"})", "'top_k'"},
      {"/v1/search", R"({"query": "x", "k": 3})", "unknown field 'k'"},
      {"/v1/search", R"({"top_k": 3})", "'query' is required"},
      {"/v1/search", R"({"query": "x", "filters": {"kinds": ["nope"]}})", "filters.kinds[0]"},
      {"/v1/episodes", R"({"text": "no session given"})", "namespace.session"},
      {"/v1/facts", R"({"text": ["a list"]})", "'text'"},
      {"/v1/consolidate", R"({"session": 5})", "'session'"},
      {"/v1/import", "{\"text\": \"fine line one here\"}\n{broken\n", "line 2"},
      // Issue 24: a repeated key (last wins before) and NUL in text (stored before).
      {"/v1/memories", R"({"text": "A long enough text for the policy", "text": "Another long enough text"})",
       "the key 'text' appears twice"},
      {"/v1/memories", R"({"memories": [{"text": "A long enough text", "tags": ["goal"], "tags": []}]})",
       "appears twice"},
      {"/v1/memories", R"({"text": "A long enough text\u0000 for the policy", "tags": ["goal"]})",
       "text contains a NUL character"},
      {"/v1/import", "{\"text\": \"A line long enough to import, with \\u0000 in it\"}\n", "NUL character"},
      {"/v1/search", R"({"query": "nul\u0000query"})", "query contains a NUL character"},
  };
  for (const Case& c : cases) {
    Answer a = Post(c.path, kKeyA, c.body, c.path == "/v1/import" ? "application/x-ndjson" : "application/json");
    EXPECT_EQ(a.status, 400) << c.path << " " << c.body.substr(0, 80) << " -> " << a.body;
    EXPECT_EQ(a.ErrorCode(), "invalid_argument") << c.body.substr(0, 80);
    EXPECT_NE(a.ErrorMessage().find(c.names), std::string::npos)
        << c.body.substr(0, 80) << " -> " << a.ErrorMessage();
  }
  for (const char* path : {"/v1/memories?limit=abc", "/v1/memories?limit=0", "/v1/memories?colour=red",
                           "/v1/memories?kind=thought", "/v1/audit?limit=-1", "/v1/sessions/s/steps?last=x"}) {
    Answer a = Get(path, kKeyA);
    EXPECT_EQ(a.status, 400) << path << " -> " << a.body;
    EXPECT_EQ(a.ErrorCode(), "invalid_argument");
  }
  EXPECT_EQ(CountRecords(kKeyA), 0u);
}

// Only JSON bodies: a browser posts text/plain, form and multipart bodies
// cross-site without asking first, so they get 415 and nothing is stored
// (curl -d needs -H 'Content-Type: application/json'). Parameters come only
// from the URL (percent-decoded).
TEST_F(RestHttpTest, OnlyJsonBodiesAndEncodedParameters) {
  const std::string body = json{{"text", "Ann Lee prefers a quiet desk by the window"},
                                {"tags", {"preference"}},
                                {"namespace", {{"user", "ann lee"}}}}
                               .dump();
  for (const char* type : {"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x",
                           "application/jsonx", ""}) {
    Answer refused = Post("/v1/memories", kKeyA, body, type);
    EXPECT_EQ(refused.status, 415) << type << ": " << refused.body;
    EXPECT_EQ(refused.ErrorCode(), "unsupported_media_type") << type;
  }
  EXPECT_EQ(CountRecords(kKeyA), 0u);
  Answer w = Post("/v1/memories", kKeyA, body, "Application/JSON; charset=utf-8");
  ASSERT_EQ(w.status, 201) << w.body;
  EXPECT_EQ(Get("/v1/memories?user=ann%20lee", kKeyA).j["memories"].size(), 1u);
  EXPECT_EQ(Get("/v1/memories?user=ann%20lee&tag=preference%2Cgoal", kKeyA).j["memories"].size(), 1u);
  EXPECT_EQ(Get("/v1/memories?user=ann", kKeyA).j["memories"].size(), 0u);
}

TEST_F(RestHttpTest, RefusalsAre422WithTheRule) {
  Answer short_text = PostJson("/v1/memories", kKeyA, {{"text", "too short"}, {"tags", {"goal"}}});
  EXPECT_EQ(short_text.status, 422) << short_text.body;
  EXPECT_EQ(short_text.ErrorCode(), "refused");
  EXPECT_EQ(short_text.j["error"]["rule"], "min_chars");
  Answer no_tag = PostJson("/v1/memories", kKeyA, {{"text", "A perfectly long sentence without any tag"}});
  EXPECT_EQ(no_tag.status, 422);
  EXPECT_EQ(no_tag.j["error"]["rule"], "stable_tag");
  // A batch is all or nothing: one refused item stores none, and the message names it.
  Answer batch = PostJson("/v1/memories", kKeyA,
                          {{"memories",
                            {{{"text", "The first batch item is perfectly fine"}, {"tags", {"goal"}}},
                             {{"text", "short"}, {"tags", {"goal"}}}}}});
  EXPECT_EQ(batch.status, 422) << batch.body;
  EXPECT_NE(batch.ErrorMessage().find("request 1"), std::string::npos) << batch.body;
  EXPECT_EQ(CountRecords(kKeyA), 0u);
  Answer ok_batch = PostJson("/v1/memories", kKeyA,
                             {{"memories",
                               {{{"text", "The first batch item is perfectly fine"}, {"tags", {"goal"}}},
                                {{"text", "The second batch item is also fine"}, {"tags", {"goal"}}}}}});
  EXPECT_EQ(ok_batch.status, 201) << ok_batch.body;
  EXPECT_EQ(ok_batch.j["results"].size(), 2u);
  EXPECT_EQ(CountRecords(kKeyA), 2u);
}

TEST_F(RestHttpTest, OversizeBodyIs413AndStoresNothing) {
  const std::string big_text(kMaxBody + 1024, 'x');
  Answer write = PostJson("/v1/memories", kKeyA, {{"text", big_text}, {"tags", {"goal"}}});
  EXPECT_EQ(write.status, 413) << write.body.substr(0, 200);
  EXPECT_EQ(write.ErrorCode(), "payload_too_large");
  EXPECT_NE(write.ErrorMessage().find("server.max_body_bytes"), std::string::npos);

  std::string jsonl;
  while (jsonl.size() <= kMaxBody) jsonl += R"({"text": "An imported line that is long enough to count"})" "\n";
  auto fresh = NewClient();
  Answer import = Post("/v1/import", kKeyA, jsonl, "application/x-ndjson", fresh.get());
  EXPECT_EQ(import.status, 413);
  EXPECT_EQ(import.ErrorCode(), "payload_too_large");

  // A chunked body (no Content-Length) is refused before it is read, however small.
  auto chunked_client = NewClient();
  const std::string small = json{{"text", "A chunked body that would fit easily"}, {"tags", {"goal"}}}.dump();
  Answer chunked = From(chunked_client->Post(
      "/v1/memories", Auth(kKeyA),
      [&small](size_t offset, httplib::DataSink& sink) {
        if (offset == 0) sink.write(small.data(), small.size());
        sink.done();
        return true;
      },
      "application/json"));
  EXPECT_EQ(chunked.status, 411) << chunked.body;
  EXPECT_EQ(chunked.ErrorCode(), "length_required");

  auto after = NewClient();
  EXPECT_EQ(Get("/healthz", "", after.get()).status, 200);  // the server is still fine
  client_ = NewClient();
  EXPECT_EQ(CountRecords(kKeyA), 0u);
  // Just under the limit is accepted (the text limit of the write policy is
  // the engine's: 32 KiB by default).
  Answer fits = PostJson("/v1/memories", kKeyA, {{"text", std::string(20000, 'y') + " fits"}, {"tags", {"goal"}}});
  EXPECT_EQ(fits.status, 201) << fits.body.substr(0, 200);
}

TEST_F(RestHttpTest, MetricsCountRoutesAndRecords) {
  auto c = NewClient();  // one keep-alive connection: each request is logged before the next is read
  EXPECT_EQ(Post("/v1/memories", kKeyA,
                 json{{"kind", "decision"}, {"text", "Metrics decision number one for the test"}, {"tags", {"goal"}}}
                     .dump(),
                 "application/json", c.get())
                .status,
            201);
  EXPECT_EQ(Post("/v1/memories", kKeyA,
                 json{{"kind", "decision"}, {"text", "Metrics decision number two for the test"}, {"tags", {"goal"}}}
                     .dump(),
                 "application/json", c.get())
                .status,
            201);
  EXPECT_EQ(Get("/v1/memories/01900000-0000-7000-8000-000000000000", kKeyA, c.get()).status, 404);
  Answer m = Get("/metrics", kKeyA, c.get());
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.Header("Content-Type").find("text/plain"), std::string::npos);
  const std::string& t = m.body;
  EXPECT_NE(t.find("msp_http_requests_total{method=\"POST\",route=\"/v1/memories\",status=\"2xx\"} 2"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("msp_http_requests_total{method=\"GET\",route=\"/v1/memories/{id}\",status=\"4xx\"} 1"),
            std::string::npos);
  EXPECT_NE(t.find("msp_http_request_duration_seconds_count{method=\"POST\",route=\"/v1/memories\",status=\"2xx\"} 2"),
            std::string::npos);
  EXPECT_NE(t.find("msp_http_request_duration_seconds_bucket{method=\"POST\",route=\"/v1/memories\",status=\"2xx\","
                   "le=\"+Inf\"} 2"),
            std::string::npos);
  EXPECT_NE(t.find("msp_records{tenant=\"alpha\",kind=\"decision\"} 2"), std::string::npos);
  EXPECT_NE(t.find("msp_records_active{tenant=\"alpha\"} 2"), std::string::npos);
  // Records per layer: gauges, and the same counts in /v1/stats.
  const std::string layer(LayerName(DefaultLayer(Kind::kDecision)));
  EXPECT_NE(t.find("# TYPE msp_records_by_layer gauge"), std::string::npos);
  EXPECT_NE(t.find("msp_records_by_layer{tenant=\"alpha\",layer=\"" + layer + "\"} 2"), std::string::npos) << t;
  EXPECT_EQ(t.find("msp_records_by_layer{tenant=\"alpha\",layer=\"episodic\"}"), std::string::npos);
  Answer stats = Get("/v1/stats", kKeyA, c.get());
  ASSERT_EQ(stats.status, 200);
  EXPECT_EQ(stats.j["by_layer"], json({{layer, 2}})) << stats.body;
  EXPECT_NE(t.find("# TYPE msp_http_request_duration_seconds histogram"), std::string::npos);
  // Raw paths never become labels.
  EXPECT_EQ(t.find("01900000-0000-7000-8000-000000000000"), std::string::npos);
}

// Every $ref in `j` names a definition that exists in `doc`.
void ExpectRefsResolve(const json& doc, const json& j, const std::string& at) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "$ref") {
        ASSERT_TRUE(v.is_string()) << at;
        const std::string ref = v.get<std::string>();
        ASSERT_EQ(ref.rfind("#/", 0), 0u) << at << " " << ref;
        EXPECT_TRUE(doc.contains(json::json_pointer(ref.substr(1)))) << at << ": unresolved " << ref;
      } else {
        ExpectRefsResolve(doc, v, at + "/" + k);
      }
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) ExpectRefsResolve(doc, j[i], at + "/" + std::to_string(i));
  }
}

std::set<std::string> Split(const std::string& names) {
  std::set<std::string> out;
  std::istringstream in(names);
  for (std::string n; std::getline(in, n, ',');) out.insert(n.substr(n.find_first_not_of(' ')));
  return out;
}

TEST_F(RestHttpTest, OpenApiDocumentCoversEveryRoute) {
  Answer a = Get("/openapi.json", kKeyA);
  ASSERT_EQ(a.status, 200);
  ASSERT_TRUE(a.j.is_object()) << "not JSON";
  const json& doc = a.j;
  EXPECT_EQ(doc["openapi"], "3.1.0");

  std::set<std::string> documented;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      std::string m = method;
      std::transform(m.begin(), m.end(), m.begin(), [](unsigned char ch) { return std::toupper(ch); });
      documented.insert(m + " " + path);
      EXPECT_TRUE(op.contains("responses")) << m << " " << path;
      const bool open = op.contains("security") && op["security"].empty();
      EXPECT_EQ(open, path == "/healthz") << m << " " << path;
      if (!open) {
        EXPECT_TRUE(op["responses"].contains("401")) << m << " " << path;
      }
    }
  }
  std::set<std::string> served;
  for (const RouteInfo& r : server_->Routes()) {
    served.insert(r.method + " " + r.path);
    EXPECT_EQ(r.needs_auth, r.path != "/healthz") << r.path;
  }
  EXPECT_EQ(documented, served);
  EXPECT_GE(served.size(), 19u);
  ExpectRefsResolve(doc, doc, "");

  // The enums are the engine's, and the served text is the file in the repository.
  std::set<std::string> kinds;
  for (const json& k : doc["components"]["schemas"]["Kind"]["enum"]) kinds.insert(k);
  EXPECT_EQ(kinds, Split(EnumNames(KindName)));
  std::set<std::string> layers;
  for (const json& l : doc["components"]["schemas"]["Layer"]["enum"]) layers.insert(l);
  EXPECT_EQ(layers, Split(EnumNames(LayerName)));
  std::ifstream in(MSP_OPENAPI_FILE);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(a.body, file.str());
}

TEST_F(RestHttpTest, EveryOperationEndToEnd) {
  // Episodes and steps.
  for (int i = 1; i <= 3; ++i) {
    Answer e = PostJson("/v1/episodes", kKeyA,
                        {{"namespace", {{"session", "s1"}, {"user", "ann"}}},
                         {"type", i % 2 ? "user_message" : "agent_response"},
                         {"text", "Step " + std::to_string(i) + ": numpy will not install on Windows 11"}});
    ASSERT_EQ(e.status, 201) << e.body;
    EXPECT_EQ(e.j["step_number"], i);
    EXPECT_EQ(e.j["namespace"]["tenant"], "alpha");
  }
  Answer steps = Get("/v1/sessions/s1/steps?last=2&user=ann", kKeyA);
  ASSERT_EQ(steps.status, 200);
  ASSERT_EQ(steps.j["steps"].size(), 2u);
  EXPECT_EQ(steps.j["steps"][0]["step_number"], 2);
  EXPECT_EQ(Get("/v1/sessions/s1/steps?user=bob", kKeyA).j["steps"].size(), 0u);
  EXPECT_EQ(steps.j["steps"][0]["trust"], "untrusted");
  // The path names the session: a parameter naming the same one is taken,
  // another is refused.
  EXPECT_EQ(Get("/v1/sessions/s1/steps?session=s1&user=ann", kKeyA).j["steps"].size(), 3u);
  Answer other = Get("/v1/sessions/s1/steps?session=s9&user=ann", kKeyA);
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_NE(other.ErrorMessage().find("parameter 'session' differs from the path's 's1'"), std::string::npos)
      << other.body;
  EXPECT_EQ(Get("/v1/sessions/s1/steps?last=1000001", kKeyA).status, 400);

  // Facts, supersede, history.
  Answer f1 = PostJson("/v1/facts", kKeyA,
                       {{"text", "The user's laptop runs Windows 11 with Python 3.12"}, {"namespace", {{"user", "ann"}}},
                        {"tags", {"profile"}}});
  ASSERT_EQ(f1.status, 201) << f1.body;
  const std::string f1_id = f1.j["id"];
  Answer f2 = PostJson("/v1/facts/" + f1_id + "/supersede", kKeyA,
                       {{"text", "The user's laptop now runs Ubuntu 24.04 with Python 3.12"},
                        {"namespace", {{"user", "ann"}}}});
  ASSERT_EQ(f2.status, 201) << f2.body;
  const std::string f2_id = f2.j["id"];
  EXPECT_NE(f1_id, f2_id);
  Answer history = Get("/v1/memories/" + f1_id + "/history", kKeyA);
  ASSERT_EQ(history.status, 200);
  ASSERT_EQ(history.j["versions"].size(), 2u);
  EXPECT_EQ(history.j["versions"][1]["id"], f2_id);
  EXPECT_EQ(Get("/v1/memories/" + f1_id, kKeyA).j["state"], "superseded");

  // Search with filters and explain.
  Answer hits = PostJson("/v1/search", kKeyA,
                         {{"query", "laptop Ubuntu Python"}, {"top_k", 5}, {"explain", true},
                          {"filters", {{"kinds", {"fact"}}}}});
  ASSERT_EQ(hits.status, 200) << hits.body;
  ASSERT_GE(hits.j["hits"].size(), 1u);
  EXPECT_EQ(hits.j["hits"][0]["memory"]["id"], f2_id);
  EXPECT_TRUE(hits.j["hits"][0].contains("explain"));
  for (const json& h : hits.j["hits"]) EXPECT_EQ(h["memory"]["kind"], "fact");

  // List with filters.
  Answer episodes = Get("/v1/memories?kind=episode&user=ann&newest_first=true&limit=2", kKeyA);
  ASSERT_EQ(episodes.status, 200);
  EXPECT_EQ(episodes.j["memories"].size(), 2u);
  EXPECT_EQ(episodes.j["limit"], 2);

  // Session end and consolidation answer reports.
  // A body naming another session, or a namespace that is not an object, is
  // refused and ends nothing.
  Answer other_end = PostJson("/v1/sessions/s1/end", kKeyA, {{"namespace", {{"session", "s2"}, {"user", "ann"}}}});
  EXPECT_EQ(other_end.status, 400) << other_end.body;
  EXPECT_NE(other_end.ErrorMessage().find("field 'namespace.session' differs from the path's 's1'"),
            std::string::npos)
      << other_end.body;
  Answer bad_ns = PostJson("/v1/sessions/s1/end", kKeyA, {{"namespace", 5}});
  EXPECT_EQ(bad_ns.status, 400) << bad_ns.body;
  EXPECT_NE(bad_ns.ErrorMessage().find("namespace"), std::string::npos) << bad_ns.body;
  Answer end = PostJson("/v1/sessions/s1/end", kKeyA, {{"namespace", {{"user", "ann"}}}});
  ASSERT_EQ(end.status, 200) << end.body;
  EXPECT_EQ(end.j["episodes_read"], 3) << end.body;
  Answer again = Post("/v1/sessions/s1/end", kKeyA, "");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.j["episodes_read"], 0) << again.body;
  // consolidate names its session in the namespace, as every face does
  // (the command line's --session); a top-level session is unknown.
  Answer flat = PostJson("/v1/consolidate", kKeyA, {{"session", "s1"}, {"namespace", {{"user", "ann"}}}});
  EXPECT_EQ(flat.status, 400) << flat.body;
  EXPECT_EQ(flat.ErrorMessage().rfind("unknown field 'session'; known fields are namespace", 0), 0u) << flat.body;
  Answer consolidate = PostJson("/v1/consolidate", kKeyA, {{"namespace", {{"session", "s1"}, {"user", "ann"}}}});
  ASSERT_EQ(consolidate.status, 200) << consolidate.body;
  EXPECT_EQ(consolidate.j["episodes_read"], 0) << consolidate.body;
  EXPECT_TRUE(consolidate.j.contains("facts_added"));

  // Stats (without the server's paths).
  Answer stats = Get("/v1/stats", kKeyA);
  ASSERT_EQ(stats.status, 200);
  EXPECT_GE(stats.j["records"].get<int>(), 5);
  EXPECT_FALSE(stats.j.contains("store_path"));

  // Delete, then audit names it with the reason.
  Answer del = Delete("/v1/memories/" + f2_id + "?reason=cleanup&user=ann", kKeyA);
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(del.j["deleted"], true);
  EXPECT_EQ(Get("/v1/memories/" + f2_id, kKeyA).status, 404);
  EXPECT_EQ(Delete("/v1/memories/" + f2_id, kKeyA).status, 404);
  Answer audit = Get("/v1/audit?record_id=" + f2_id + "&limit=10", kKeyA);
  ASSERT_EQ(audit.status, 200);
  ASSERT_GE(audit.j["events"].size(), 2u);
  EXPECT_EQ(audit.j["events"][0]["action"], "delete");
  EXPECT_EQ(audit.j["events"][0]["reason"], "cleanup");
  EXPECT_EQ(audit.j["events"][0]["actor"], "rest");

  // Export -> import into the same tenant replaces the same records.
  Answer exported = Get("/v1/export", kKeyA);
  ASSERT_EQ(exported.status, 200);
  EXPECT_NE(exported.Header("Content-Type").find("application/x-ndjson"), std::string::npos);
  const size_t lines = std::count(exported.body.begin(), exported.body.end(), '\n');
  const size_t before = CountRecords(kKeyA);
  EXPECT_EQ(lines, before);
  Answer imported = Post("/v1/import", kKeyA, exported.body, "application/x-ndjson");
  ASSERT_EQ(imported.status, 200) << imported.body;
  EXPECT_EQ(imported.j["applied"], static_cast<int>(lines));
  EXPECT_EQ(CountRecords(kKeyA), before);
  EXPECT_EQ(Get("/v1/export", kKeyA).body, exported.body);
}

TEST_F(RestHttpTest, AccessLogIsOneJsonObjectPerLineWithoutKeys) {
  const std::string id = WriteDecision(kKeyA, "A decision that shows up in the access log");
  EXPECT_EQ(Get("/v1/memories", "").status, 401);
  EXPECT_EQ(Get("/v1/nothing", kKeyB).status, 404);
  Answer traced = From(client_->Get("/healthz", {{"X-Request-Id", "trace-abc-123"}}));
  EXPECT_EQ(traced.Header("X-Request-Id"), "trace-abc-123");
  EXPECT_FALSE(Get("/healthz", "").Header("X-Request-Id").empty());
  client_.reset();  // closes its keep-alive connection, which Stop() would otherwise wait out
  server_->Stop();  // joins the server threads: the log is complete

  std::istringstream in(log_.str());
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    for (const char* field : {"time", "method", "route", "status", "duration_ms", "tenant", "request_id"}) {
      EXPECT_TRUE(j.contains(field)) << field << " in " << line;
    }
    lines.push_back(j);
  }
  ASSERT_EQ(lines.size(), 5u) << log_.str();
  EXPECT_EQ(lines[0]["route"], "/v1/memories");
  EXPECT_EQ(lines[0]["method"], "POST");
  EXPECT_EQ(lines[0]["status"], 201);
  EXPECT_EQ(lines[0]["tenant"], "alpha");
  EXPECT_TRUE(lines[1]["tenant"].is_null());
  EXPECT_EQ(lines[1]["status"], 401);
  EXPECT_EQ(lines[2]["route"], "unmatched");
  EXPECT_EQ(lines[2]["tenant"], "beta");
  EXPECT_EQ(lines[3]["request_id"], "trace-abc-123");
  for (const std::string& key : {kKeyA, kKeyA2, kKeyB}) {
    EXPECT_EQ(log_.str().find(key), std::string::npos) << "a key leaked into the log";
  }
  EXPECT_FALSE(id.empty());
}

TEST_F(RestHttpTest, AnonymousModeServesTenantDefault) {
  server_.reset();
  ServerOptions so;
  so.port = 0;
  so.allow_anonymous = true;
  StartServer(so);
  Answer w = PostJson("/v1/memories", "", {{"text", "An anonymous caller writes this preference"}, {"tags", {"preference"}}});
  ASSERT_EQ(w.status, 201) << w.body;
  Answer got = Get("/v1/memories/" + w.j["id"].get<std::string>(), "");
  EXPECT_EQ(got.j["namespace"]["tenant"], "default");
  EXPECT_EQ(Get("/v1/memories?tenant=other", "").status, 403);
}

// as_of: what held at a time, in POST /v1/search and GET /v1/memories.
TEST_F(RestHttpTest, AsOfServesWhatHeldThen) {
  Answer old_fact = PostJson("/v1/facts", kKeyA,
                             {{"text", "Ansible playbooks install the relay service on bare metal hosts"},
                              {"valid_at", "2020-01-01T00:00:00Z"}, {"tags", {"profile"}}});
  ASSERT_EQ(old_fact.status, 201) << old_fact.body;
  Answer future_fact = PostJson("/v1/facts", kKeyA,
                                {{"text", "Kubernetes operators roll out every relay release in the cloud cluster"},
                                 {"valid_at", "2030-01-01T00:00:00Z"}, {"tags", {"profile"}}});
  ASSERT_EQ(future_fact.status, 201) << future_fact.body;
  ASSERT_EQ(future_fact.j["merged"], false);
  const std::string old_id = old_fact.j["id"], future_id = future_fact.j["id"];

  auto ids_of = [](const json& list, const char* key) {
    std::set<std::string> ids;
    for (const json& x : list) ids.insert(key[0] ? x[key]["id"].get<std::string>() : x["id"].get<std::string>());
    return ids;
  };
  const json query = {{"query", "relay service release hosts cluster"}, {"top_k", 10}};
  Answer now = PostJson("/v1/search", kKeyA, query);
  ASSERT_EQ(now.status, 200) << now.body;
  EXPECT_EQ(ids_of(now.j["hits"], "memory"), (std::set<std::string>{old_id, future_id}));
  json then = query;
  then["as_of"] = "2021-06-01T00:00:00Z";
  Answer in_2021 = PostJson("/v1/search", kKeyA, then);
  ASSERT_EQ(in_2021.status, 200) << in_2021.body;
  EXPECT_EQ(ids_of(in_2021.j["hits"], "memory"), std::set<std::string>{old_id});

  Answer listed = Get("/v1/memories?kind=fact&as_of=2021-06-01T00:00:00Z", kKeyA);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(ids_of(listed.j["memories"], ""), std::set<std::string>{old_id});
  EXPECT_EQ(Get("/v1/memories?kind=fact", kKeyA).j["memories"].size(), 2u);

  then["as_of"] = "last tuesday";
  Answer bad = PostJson("/v1/search", kKeyA, then);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.ErrorMessage().find("as_of"), std::string::npos) << bad.body;
  Answer bad_list = Get("/v1/memories?as_of=soon", kKeyA);
  EXPECT_EQ(bad_list.status, 400);
  EXPECT_NE(bad_list.ErrorMessage().find("as_of"), std::string::npos) << bad_list.body;
}

}  // namespace
}  // namespace msp
