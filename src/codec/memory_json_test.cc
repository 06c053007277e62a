// Tests for the JSON codec: round trips of every field and every error case.
#include "codec/memory_json.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "util/time.h"
#include "util/uuid.h"

namespace msp {
namespace {

using nlohmann::json;

Memory FullMemory() {
  Memory m;
  m.id = "0190f0a4-1c2b-7def-8123-456789abcdef";
  m.ns.tenant = "acme";
  m.ns.user = "ann";
  m.ns.agent = "claude";
  m.ns.session = "s-42";
  m.ns.mission = "apollo";
  m.ns.operator_id = "op-7";
  m.layer = Layer::kWorkflow;
  m.kind = Kind::kDecision;
  m.text = "Use SQLite in WAL mode — \"durable\" enough;\nпривет, 世界 🚀\ttab \x01 ctrl";
  m.body_json = R"({"context":"ctx","nested":{"list":[1,2.5,"три",null,true]},"title":"WAL"})";
  m.tags = {"constraint", "база", "🏷"};
  m.source = "user";
  m.sensitivity = Sensitivity::kMedium;
  m.criticality = Criticality::kCritical;
  m.confidence = 0.8125;
  m.created_at = 1764496800123;
  m.updated_at = 1764496800999;
  m.expires_at = 1764496800123 + 30 * kMsPerDay;
  m.valid_at = 1700000000000;
  m.invalid_at = 1800000000001;
  m.access_count = 17;
  m.last_accessed = 1764496801000;
  m.provenance = {{"commit", "abc123", "src/main.cc:10"}, {"url", "https://example.com/ü", ""}};
  m.state = RecordState::kSuperseded;
  m.supersedes = "0190f0a4-1c2b-7def-8123-000000000001";
  m.superseded_by = "0190f0a4-1c2b-7def-8123-000000000002";
  m.step_number = 0;
  return m;
}

Memory RoundTrip(const Memory& m, bool with_embedding = false) {
  // Through text too, as export/import does.
  const std::string text = DumpJson(MemoryToJson(m, with_embedding));
  auto back = MemoryFromJsonText(text, "line 1");
  EXPECT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  return back.ok() ? *back : Memory{};
}

TEST(MemoryJsonTest, WritesCanonicalFieldNames) {
  const json j = MemoryToJson(FullMemory());
  for (const char* key : {"id", "namespace", "layer", "kind", "text", "body", "tags", "source", "sensitivity",
                          "criticality", "confidence", "created_at", "updated_at", "expires_at", "valid_at",
                          "invalid_at", "access_count", "last_accessed", "provenance", "state", "supersedes",
                          "superseded_by", "step_number"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_FALSE(j.contains("seq"));
  EXPECT_FALSE(j.contains("embedding"));
  EXPECT_FALSE(j.contains("embedder_id"));
  EXPECT_EQ(j["namespace"]["operator"], "op-7");
  EXPECT_EQ(j["layer"], "workflow");
  EXPECT_EQ(j["kind"], "decision");
  EXPECT_EQ(j["sensitivity"], "medium");
  EXPECT_EQ(j["criticality"], "critical");
  EXPECT_EQ(j["state"], "superseded");
  EXPECT_EQ(j["created_at"], "2025-11-30T10:00:00.123Z");
  EXPECT_TRUE(j["body"].is_object());
  EXPECT_EQ(j["body"]["title"], "WAL");
  EXPECT_EQ(j["provenance"][0]["type"], "commit");
  EXPECT_EQ(j["provenance"][0]["detail"], "src/main.cc:10");
}

TEST(MemoryJsonTest, UnsetTimesAreNull) {
  Memory m;
  m.text = "x";
  const json j = MemoryToJson(m);
  for (const char* key : {"created_at", "updated_at", "expires_at", "valid_at", "invalid_at", "last_accessed"}) {
    EXPECT_TRUE(j[key].is_null()) << key;
  }
  EXPECT_EQ(RoundTrip(m), m);
}

TEST(MemoryJsonTest, FullRecordRoundTrips) {
  const Memory m = FullMemory();
  EXPECT_EQ(RoundTrip(m), m);
}

TEST(MemoryJsonTest, EmbeddingRoundTripsOnlyWhenAsked) {
  Memory m = FullMemory();
  m.embedder_id = "hashing-v1-4";
  m.embedding = {0.1f, -0.25f, 1e-7f, 0.3333333f};
  const json with = MemoryToJson(m, true);
  ASSERT_TRUE(with.contains("embedding"));
  EXPECT_EQ(with["embedder_id"], "hashing-v1-4");
  EXPECT_EQ(RoundTrip(m, true), m);

  Memory without = RoundTrip(m, false);
  EXPECT_TRUE(without.embedding.empty());
  EXPECT_TRUE(without.embedder_id.empty());
  without.embedding = m.embedding;
  without.embedder_id = m.embedder_id;
  EXPECT_EQ(without, m);
}

TEST(MemoryJsonTest, SeqIsNotCarried) {
  Memory m = FullMemory();
  m.seq = 99;
  Memory back = RoundTrip(m);
  EXPECT_EQ(back.seq, 0);
  back.seq = 99;
  EXPECT_EQ(back, m);
}

// Random records over every enum value, unicode text and many times.
// A random record's source, levels, confidence, times and access counts;
// `text(n)` makes a string of up to n pieces, `time()` a time or 0.
template <typename Text, typename Time>
void RandomScalars(Memory& m, std::mt19937_64& rng, Text&& text, Time&& time) {
  m.source = text(2);
  m.sensitivity = static_cast<Sensitivity>(rng() % 3);
  m.criticality = static_cast<Criticality>(rng() % 4);
  m.confidence = static_cast<double>(rng() % 1000001) / 1000000.0;
  m.created_at = time();
  m.updated_at = time();
  m.expires_at = time();
  m.valid_at = time();
  m.invalid_at = time();
  m.access_count = static_cast<int64_t>(rng() % 100000);
  m.access_level = static_cast<int>(rng() % 10);
  m.last_accessed = time();
}

TEST(MemoryJsonTest, RandomRecordsRoundTrip) {
  std::mt19937_64 rng(12345);
  const std::vector<std::string> pieces = {"a", "Zz", " ", "\"", "\\", "\n", "é", "ß", "Ж", "中文", "🙂",
                                           "\u2028", "\x7f", "{", "}", "[", "\t", "0", "null", "\u00a0"};
  auto text = [&](int max_pieces) {
    std::string s;
    const int n = static_cast<int>(rng() % static_cast<uint64_t>(max_pieces + 1));
    for (int i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
    return s;
  };
  auto time = [&]() -> TimeMs {
    if (rng() % 4 == 0) return 0;
    return static_cast<TimeMs>(rng() % 253402300799999ULL) + 1;  // up to 9999-12-31
  };
  for (int iter = 0; iter < 500; ++iter) {
    Memory m;
    m.id = rng() % 5 == 0 ? "" : NewUuid(1764496800000 + iter);
    m.ns.tenant = "t" + text(3);
    m.ns.user = text(2);
    m.ns.agent = text(2);
    m.ns.session = text(2);
    m.ns.mission = text(2);
    m.ns.operator_id = text(2);
    m.kind = static_cast<Kind>(rng() % 7);
    m.layer = static_cast<Layer>(rng() % 6);
    m.text = text(30);
    json body = json::object();
    const int fields = static_cast<int>(rng() % 4);
    for (int f = 0; f < fields; ++f) body[text(3)] = f % 2 == 0 ? json(text(5)) : json(f * 1.5);
    m.body_json = body.dump();
    for (int t = 0, n = static_cast<int>(rng() % 4); t < n; ++t) m.tags.push_back(text(3));
    RandomScalars(m, rng, text, time);
    for (int p = 0, n = static_cast<int>(rng() % 3); p < n; ++p) {
      m.provenance.push_back({"t" + text(2), text(4), text(3)});
    }
    m.state = static_cast<RecordState>(rng() % 2);
    if (rng() % 3 == 0) m.supersedes = NewUuid(1);
    if (rng() % 3 == 0) m.superseded_by = NewUuid(2);
    m.step_number = static_cast<int64_t>(rng() % 1000);
    const bool with_embedding = rng() % 2 == 0;
    if (with_embedding) {
      m.embedder_id = "e" + text(2);
      for (int d = 0; d < 8; ++d) {
        m.embedding.push_back(static_cast<float>(static_cast<double>(rng() % 2000001) / 1000000.0 - 1.0));
      }
    }
    ASSERT_EQ(RoundTrip(m, with_embedding), m) << "iteration " << iter << "\n"
                                               << DumpJson(MemoryToJson(m, with_embedding));
  }
}

// Random records and hits written as text (AppendMemoryJson,
// AppendSearchHitJson) are the bytes of their trees dumped: every field, odd
// strings (invalid UTF-8 too, written as U+FFFD both ways), times unset and
// set, bodies that are objects, empty and not objects, passages, explain
// entries, context steps with and without steps of their own, and the faces'
// last members.
TEST(MemoryJsonTest, AnswersWrittenAsTextAreTheTreesDumped) {
  std::mt19937_64 rng(777);
  const std::vector<std::string> pieces = {"a", "Zz", " ", "\"", "\\", "\n", "é", "中文", "🙂", "\u2028",
                                           "\x7f", "\x01", "\xc3", "\x80", "{", "0", "null"};
  auto text = [&](int max_pieces) {
    std::string s;
    for (int i = static_cast<int>(rng() % static_cast<uint64_t>(max_pieces + 1)); i > 0; --i) {
      s += pieces[rng() % pieces.size()];
    }
    return s;
  };
  auto time = [&]() -> TimeMs { return rng() % 4 == 0 ? 0 : static_cast<TimeMs>(rng() % 253402300799999ULL) + 1; };
  auto number = [&]() {
    switch (rng() % 4) {
      case 0: return 0.0;
      case 1: return 1.0;
      case 2: return static_cast<double>(rng() % 1000001) / 1000000.0;
      default: return static_cast<double>(rng() % 100000) * 1e-7 + 3.0;
    }
  };
  auto memory = [&] {
    Memory m;
    m.id = NewUuid(1764496800000 + static_cast<TimeMs>(rng() % 1000));
    m.ns = Namespace{"t" + text(2), text(2), text(1), text(2), text(1), text(1)};
    m.kind = static_cast<Kind>(rng() % 7);
    m.layer = static_cast<Layer>(rng() % 6);
    m.text = text(20);
    switch (rng() % 4) {
      case 0: m.body_json = "{}"; break;
      case 1: m.body_json = ""; break;
      case 2: m.body_json = "not an object " + text(2); break;
      default: m.body_json = DumpJson(json{{text(2), text(3)}, {"n", number()}, {"list", {1, "x", nullptr}}}); break;
    }
    for (int t = static_cast<int>(rng() % 4); t > 0; --t) m.tags.push_back(text(3));
    RandomScalars(m, rng, text, time);
    for (int p = static_cast<int>(rng() % 3); p > 0; --p) m.provenance.push_back({text(2), text(3), text(2)});
    m.state = static_cast<RecordState>(rng() % 2);
    if (rng() % 3 == 0) m.supersedes = text(2);
    if (rng() % 3 == 0) m.superseded_by = text(2);
    m.step_number = static_cast<int64_t>(rng() % 1000);
    return m;
  };
  auto hit = [&](auto& self, int depth) -> SearchHit {
    SearchHit h;
    h.memory = memory();
    h.score = number();
    for (int e = static_cast<int>(rng() % 3); e > 0; --e) {
      h.explain.push_back({text(2), static_cast<int>(rng() % 300), number() * 20, number()});
    }
    if (rng() % 3 == 0 && !h.memory.text.empty()) {
      h.passage_begin = static_cast<int64_t>(rng() % h.memory.text.size());
      h.passage_end = static_cast<int64_t>(h.memory.text.size());
      h.passage = h.memory.text.substr(static_cast<size_t>(h.passage_begin));
      if (h.passage.empty()) h.passage = "x";
    }
    for (int c = depth < 2 ? static_cast<int>(rng() % 3) : 0; c > 0; --c) h.context.push_back(self(self, depth + 1));
    return h;
  };
  const auto last = [](const Memory& m) {
    return m.source.size() % 2 == 0 ? std::string("\"trust\":\"trusted\"") : std::string("\"trust\":\"untrusted\"");
  };
  for (int round = 0; round < 2000; ++round) {
    const SearchHit h = hit(hit, 0);
    std::string namespace_text;
    AppendNamespaceJson(namespace_text, h.memory.ns);
    ASSERT_EQ(namespace_text, DumpJson(NamespaceToJson(h.memory.ns))) << "round " << round;

    std::string memory_text;
    AppendMemoryJson(memory_text, h.memory);
    ASSERT_EQ(memory_text, DumpJson(MemoryToJson(h.memory))) << "round " << round;

    std::string plain;
    AppendSearchHitJson(plain, h);
    ASSERT_EQ(plain, DumpJson(SearchHitToJson(h))) << "round " << round;

    // With a last member: the trust label a face adds to the hit and to its
    // own context steps (not to steps of steps).
    json tree = SearchHitToJson(h);
    tree["trust"] = last(h.memory) == "\"trust\":\"trusted\"" ? "trusted" : "untrusted";
    for (size_t i = 0; i < h.context.size(); ++i) {
      tree["context"][i]["trust"] = last(h.context[i].memory) == "\"trust\":\"trusted\"" ? "trusted" : "untrusted";
    }
    std::string labelled;
    AppendSearchHitJson(labelled, h, last);
    ASSERT_EQ(labelled, DumpJson(tree)) << "round " << round;
  }
}

TEST(MemoryJsonTest, MissingOptionalFieldsTakeDefaults) {
  auto m = MemoryFromJson(json{{"text", "only text"}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Memory expected;
  expected.text = "only text";
  EXPECT_EQ(*m, expected);

  auto ep = MemoryFromJson(json{{"text", "step"}, {"kind", "episode"}, {"namespace", {{"user", "u"}}}});
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  EXPECT_EQ(ep->layer, Layer::kEpisodic);  // DefaultLayer(kind)
  EXPECT_EQ(ep->ns.tenant, "default");
  EXPECT_EQ(ep->ns.user, "u");
}

// Returns the error message of decoding `j`, or "" when it decodes.
std::string ErrorOf(const json& j) {
  auto m = MemoryFromJson(j);
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  return m.status().message();
}

json Base() { return json{{"text", "some text"}}; }

json With(const std::string& key, json value) {
  json j = Base();
  j[key] = std::move(value);
  return j;
}

TEST(MemoryJsonTest, RejectsNonObjects) {
  EXPECT_NE(ErrorOf(json::array()).find("must be a JSON object, got array"), std::string::npos);
  EXPECT_NE(ErrorOf(json("text")).find("got string"), std::string::npos);
}

TEST(MemoryJsonTest, RejectsUnknownFieldsByName) {
  const std::string e = ErrorOf(With("colour", "blue"));
  EXPECT_NE(e.find("unknown field 'colour'"), std::string::npos) << e;
  EXPECT_NE(e.find("known fields are id, namespace"), std::string::npos) << e;
  const std::string ns = ErrorOf(With("namespace", {{"tenant", "a"}, {"team", "b"}}));
  EXPECT_NE(ns.find("unknown field 'namespace.team'"), std::string::npos) << ns;
  const std::string prov = ErrorOf(With("provenance", json::array({{{"type", "url"}, {"ref", "x"}, {"page", 1}}})));
  EXPECT_NE(prov.find("unknown field 'provenance[0].page'"), std::string::npos) << prov;
  EXPECT_NE(ErrorOf(With("seq", 5)).find("unknown field 'seq'"), std::string::npos);
}

TEST(MemoryJsonTest, RequiresText) {
  EXPECT_NE(ErrorOf(json{{"kind", "fact"}}).find("missing field 'text'"), std::string::npos);
}

TEST(MemoryJsonTest, RejectsWrongTypesNamingFieldAndType) {
  struct Case {
    const char* key;
    json value;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"text", 5, "field 'text' must be a string, got integer"},
      {"id", true, "field 'id' must be a string, got boolean"},
      {"namespace", "acme", "field 'namespace' must be an object, got string"},
      {"body", "{}", "field 'body' must be an object, got string"},
      {"body", json::array(), "field 'body' must be an object, got array"},
      {"tags", "a,b", "field 'tags' must be an array of strings, got string"},
      {"tags", json::array({"a", 2}), "field 'tags[1]' must be a string, got integer"},
      {"confidence", "high", "field 'confidence' must be a number, got string"},
      {"access_count", 1.5, "field 'access_count' must be an integer, got number"},
      {"step_number", "3", "field 'step_number' must be an integer, got string"},
      {"created_at", 1764496800123, "field 'created_at' must be an ISO 8601 string or null, got integer"},
      {"kind", 1, "field 'kind' must be a string, got integer"},
      {"provenance", "commit:abc", "field 'provenance' must be an array of {type, ref, detail}, got string"},
      {"provenance", json::array({"x"}), "field 'provenance[0]' must be an object {type, ref, detail}, got string"},
      {"embedding", json::array({0.1, "x"}), "field 'embedding[1]' must be a number, got string"},
      {"namespace", {{"user", 7}}, "field 'namespace.user' must be a string, got integer"},
  };
  for (const Case& c : cases) {
    const std::string e = ErrorOf(With(c.key, c.value));
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.key << ": " << e;
  }
}

TEST(MemoryJsonTest, RejectsUnknownEnumNamesListingAllowed) {
  struct Case {
    const char* key;
    const char* allowed;
  };
  const std::vector<Case> cases = {
      {"kind", "episode, fact, procedure, decision, correction, document_chunk, artifact"},
      {"layer", "episodic, semantic, procedural, domain, workflow, practitioner"},
      {"sensitivity", "low, medium, high"},
      {"criticality", "low, normal, high, critical"},
      {"state", "active, superseded"},
  };
  for (const Case& c : cases) {
    const std::string e = ErrorOf(With(c.key, "bogus"));
    EXPECT_NE(e.find(std::string("field '") + c.key + "': unknown value 'bogus'"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("allowed: ") + c.allowed), std::string::npos) << e;
  }
  // Names are exact: no case folding.
  EXPECT_NE(ErrorOf(With("kind", "Fact")).find("unknown value 'Fact'"), std::string::npos);
}

TEST(MemoryJsonTest, RejectsInvalidUtf8NamingField) {
  const std::string bad = "ok\xC3\x28";
  EXPECT_NE(ErrorOf(With("text", bad)).find("field 'text' is not valid UTF-8 (bad byte at offset 2)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("source", bad)).find("field 'source' is not valid UTF-8"), std::string::npos);
  EXPECT_NE(ErrorOf(With("tags", json::array({"fine", bad}))).find("field 'tags[1]' is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("namespace", {{"user", bad}})).find("field 'namespace.user' is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("body", {{"k", {{"deep", bad}}}})).find("field 'body.k.deep' is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("provenance", json::array({{{"type", "url"}, {"ref", bad}}})))
                .find("field 'provenance[0].ref' is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("kind", bad)).find("unknown value (invalid UTF-8)"), std::string::npos);
}

TEST(MemoryJsonTest, RejectsBadTimestampsNamingField) {
  for (const char* key : {"created_at", "updated_at", "expires_at", "valid_at", "invalid_at", "last_accessed"}) {
    const std::string e = ErrorOf(With(key, "yesterday"));
    EXPECT_NE(e.find(std::string("field '") + key + "': 'yesterday' is not an ISO 8601 time"), std::string::npos)
        << e;
  }
  EXPECT_NE(ErrorOf(With("created_at", "2024-02-30")).find("day out of range"), std::string::npos);
}

TEST(MemoryJsonTest, RejectsOutOfRangeValues) {
  EXPECT_NE(ErrorOf(With("confidence", 1.5)).find("field 'confidence' must be between 0 and 1, got 1.5"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("confidence", -0.1)).find("field 'confidence' must be between"), std::string::npos);
  EXPECT_NE(ErrorOf(With("access_count", -1)).find("field 'access_count' must be >= 0, got -1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("step_number", -3)).find("field 'step_number' must be >= 0"), std::string::npos);
  EXPECT_NE(ErrorOf(With("access_count", json(18446744073709551615ULL))).find("'access_count' is out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("embedding", json::array({1e300}))).find("'embedding[0]' is out of range"),
            std::string::npos);
}

TEST(MemoryJsonTest, RejectsMalformedIdsAndRefs) {
  EXPECT_NE(ErrorOf(With("id", "r1")).find("field 'id' must be a UUID, got 'r1'"), std::string::npos);
  EXPECT_NE(ErrorOf(With("supersedes", "nope")).find("field 'supersedes' must be a UUID"), std::string::npos);
  EXPECT_NE(ErrorOf(With("superseded_by", "nope")).find("field 'superseded_by' must be a UUID"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("namespace", {{"tenant", ""}})).find("field 'namespace.tenant' must not be empty"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("provenance", json::array({{{"ref", "x"}}}))).find("missing field 'provenance[0].type'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("provenance", json::array({{{"type", ""}, {"ref", "x"}}})))
                .find("field 'provenance[0].type' must not be empty"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("embedding", json::array({0.5}))).find("'embedder_id' is required with 'embedding'"),
            std::string::npos);
}

// Random byte edits of a valid line: decoding either succeeds or fails with
// InvalidArgument; it never crashes (run under ASan/UBSan in the sanitizer build).
TEST(MemoryJsonTest, MutatedInputNeverCrashes) {
  Memory m = FullMemory();
  m.embedder_id = "e";
  m.embedding = {0.5f, -0.5f};
  const std::string line = DumpJson(MemoryToJson(m, true));
  std::mt19937_64 rng(7);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = line;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[pos] = static_cast<char>(rng() % 256); break;
        case 1: s.erase(pos, 1 + rng() % 8); break;
        default: s.insert(pos, 1, "{}[]\",:0\xff"[rng() % 10]); break;
      }
      if (s.empty()) s = "{";
    }
    auto r = MemoryFromJsonText(s, "line 1");
    if (r.ok()) {
      ++accepted;
      // Whatever was accepted encodes again and decodes to the same record.
      auto again = MemoryFromJsonText(DumpJson(MemoryToJson(*r, true)), "line 1");
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(*again, *r);
    } else {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(r.status().message().rfind("line 1: ", 0), 0u) << r.status().message();
    }
  }
  EXPECT_LT(accepted, 3000);  // the edits did break some lines
}

TEST(ParseJsonObjectTest, ParsesObjects) {
  auto j = ParseJsonObject(R"({"a": [1, {"b": "ü"}]})", "--body");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["a"][1]["b"], "ü");
}

TEST(ParseJsonObjectTest, SyntaxErrorsGiveBytePosition) {
  auto j = ParseJsonObject(R"({"a": tru})", "--body");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(j.status().message().find("--body: invalid JSON at byte 10"), std::string::npos)
      << j.status().message();
  EXPECT_EQ(j.status().message().find("json.exception"), std::string::npos) << j.status().message();

  auto empty = ParseJsonObject("", "line 4");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("line 4: invalid JSON at byte"), std::string::npos);

  auto trailing = ParseJsonObject(R"({"a": 1} x)", "line 2");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.status().message().find("line 2: invalid JSON at byte 10"), std::string::npos)
      << trailing.status().message();
}

TEST(ParseJsonObjectTest, RejectsNonObjects) {
  for (const char* text : {"[1,2]", "\"s\"", "3", "null", "true"}) {
    auto j = ParseJsonObject(text, "--content");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_NE(j.status().message().find("--content: expected a JSON object, got"), std::string::npos)
        << j.status().message();
  }
}

// Last-wins would let a proxy or a log read one value and msp another.
TEST(ParseJsonObjectTest, RejectsRepeatedKeys) {
  for (const char* text : {R"({"text": "a", "text": "b"})", R"({"a": {"k": 1, "k": 1}})",
                           R"({"a": [{"x": 1}, {"y": 2, "y": 3}]})"}) {
    auto j = ParseJsonObject(text, "line 3");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(j.status().message().find("line 3: the key '"), std::string::npos) << j.status().message();
    EXPECT_NE(j.status().message().find("appears twice"), std::string::npos) << j.status().message();
  }
  EXPECT_NE(ParseJsonObject(R"({"text": "a", "text": "b"})", "x").status().message().find("'text'"),
            std::string::npos);
  // The same key in different objects is fine.
  auto ok = ParseJsonObject(R"({"k": {"k": 1}, "a": [{"k": 1}, {"k": 2}]})", "x");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)["a"][1]["k"], 2);
}

TEST(ParseJsonObjectTest, RejectsInvalidUtf8WithByte) {
  auto j = ParseJsonObject("{\"a\": \"x\xFFy\"}", "line 9");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), "line 9: invalid UTF-8 at byte 8");
}

TEST(ParseJsonObjectTest, RejectsDeepNesting) {
  std::string deep = "{\"a\":";
  for (int i = 0; i < 100000; ++i) deep += "[";
  auto j = ParseJsonObject(deep, "--body");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("nested deeper than 64 levels"), std::string::npos);
  // Brackets inside strings do not count.
  std::string shallow = "{\"a\":\"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_TRUE(ParseJsonObject(shallow, "--body").ok());
}

TEST(MemoryFromJsonTextTest, PrefixesErrorsWithWhat) {
  auto m = MemoryFromJsonText(R"({"text": "x", "kind": "nope"})", "line 7");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("line 7: field 'kind': unknown value 'nope'"), std::string::npos)
      << m.status().message();
}

TEST(DumpJsonTest, ReplacesInvalidUtf8InsteadOfThrowing) {
  json j = {{"text", std::string("a\xFF")}};
  EXPECT_EQ(DumpJson(j), "{\"text\":\"a\xEF\xBF\xBD\"}");
  EXPECT_EQ(DumpJson(json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(ReportJsonTest, SearchHitAuditStatsWriteResult) {
  SearchHit hit;
  hit.memory = FullMemory();
  hit.score = 0.75;
  hit.explain = {{"bm25", 1, 3.5, 0.5}, {"cosine", 0, 0.0, 0.0}};
  const json h = SearchHitToJson(hit);
  EXPECT_EQ(h["score"], 0.75);
  EXPECT_EQ(h["memory"]["id"], hit.memory.id);
  EXPECT_EQ(h["explain"][0]["signal"], "bm25");
  EXPECT_EQ(h["explain"][0]["rank"], 1);
  EXPECT_EQ(h["explain"][0]["raw"], 3.5);
  EXPECT_EQ(h["explain"][0]["contribution"], 0.5);
  EXPECT_EQ(h["explain"][1]["rank"], 0);

  AuditEvent e;
  e.seq = 4;
  e.at = 1764496800123;
  e.actor = "cli";
  e.action = AuditAction::kSupersede;
  e.record_id = "r";
  e.tenant = "acme";
  e.reason = "changed";
  e.details_json = R"({"old":"a"})";
  const json a = AuditEventToJson(e);
  EXPECT_EQ(a["action"], "supersede");
  EXPECT_EQ(a["at"], "2025-11-30T10:00:00.123Z");
  EXPECT_EQ(a["details"]["old"], "a");
  EXPECT_EQ(a["seq"], 4);

  Stats s;
  s.records = 10;
  s.active = 8;
  s.by_kind = {{"fact", 6}, {"episode", 4}};
  s.by_layer = {{"semantic", 6}, {"episodic", 4}};
  s.embedder_id = "hashing";
  s.store_path = "sqlite:/srv/msp/msp.db";
  const json st = StatsToJson(s);
  EXPECT_EQ(st["records"], 10);
  EXPECT_EQ(st["by_kind"]["episode"], 4);
  EXPECT_EQ(st["by_layer"]["semantic"], 6);
  EXPECT_EQ(st["embedder_id"], "hashing");
  EXPECT_FALSE(st.contains("store_path"));

  WriteResult w{"id1", true, {"x", "y"}};
  const json wr = WriteResultToJson(w);
  EXPECT_EQ(wr["merged"], true);
  EXPECT_EQ(wr["evicted_ids"].size(), 2u);

  ConsolidationReport c;
  c.episodes_read = 20;
  c.facts_added = 2;
  c.facts_merged = 1;
  c.fact_ids = {"a", "b", "c"};
  const json cr = ConsolidationReportToJson(c);
  EXPECT_EQ(cr["episodes_read"], 20);
  EXPECT_EQ(cr["fact_ids"][2], "c");

  ImportReport report;
  report.lines = 3;
  report.applied = 2;
  report.split = 1;
  EXPECT_EQ(ImportReportToJson(report)["applied"], 2);
  EXPECT_EQ(ImportReportToJson(report)["split"], 1);
  EXPECT_EQ(ImportReportToJson(report)["truncated"], 0);
}

// The one serialisation of a hit behind every face: a hit that shows part
// of its record serves that part as the memory's text, with its offsets and
// the whole text's length; any other hit has no passage.
TEST(MemoryJsonTest, SearchHitServesItsPassage) {
  SearchHit hit;
  hit.memory.id = "0190a0b0-0000-7000-8000-000000000001";
  hit.memory.text = "a long record whose middle part matched the query, and more";
  hit.score = 0.8;
  nlohmann::json whole = SearchHitToJson(hit);
  EXPECT_EQ(whole["memory"]["text"], hit.memory.text);
  EXPECT_FALSE(whole.contains("passage"));
  hit.passage = "middle part matched";
  hit.passage_begin = 20;
  hit.passage_end = 39;
  nlohmann::json part = SearchHitToJson(hit);
  EXPECT_EQ(part["memory"]["text"], "middle part matched");
  EXPECT_EQ(part["passage"]["begin"], 20);
  EXPECT_EQ(part["passage"]["end"], 39);
  EXPECT_EQ(part["passage"]["text_bytes"], hit.memory.text.size());
  EXPECT_EQ(hit.memory.text.substr(20, 19), hit.passage);
}

}  // namespace
}  // namespace msp
