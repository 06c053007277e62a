// The ADR import over a real engine (mission_fixture.h): a folder of ADRs
// (Nygard, MADR, Docusaurus, ...) imported, linked by supersede both ways,
// re-imported as revisions, dated from git, and the same files given as
// text; a bad file fails alone and a link out of the folder is not
// followed.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ingest/fixtures.h"
#include "mission/mission_fixture.h"
#include "mission/records.h"
#include "msp/memory.h"
#include "msp/mission.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_util.h"
#include "util/time.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

using testing::Contains;

using testing::FakeClock;

// ------------------------------------------------------------ ADR import

AdrFile TextFile(const std::string& name, const std::string& text) {
  AdrFile f;
  f.name = name;
  f.text = text;
  return f;
}

class AdrImportTest : public MissionTest {
 protected:
  void SetUp() override {
    MissionTest::SetUp();
    adr_dir_ = dir_.path() + "/adr";
    fs::create_directories(adr_dir_);
    WriteFile(adr_dir_ + "/0001-record-architecture-decisions.md",
              "# 1. Record architecture decisions\n\nDate: 2016-02-12\n\n## Status\n\nAccepted\n\n## Context\n\n"
              "We need to record decisions.\n\n## Decision\n\nWe will use ADRs.\n\n## Consequences\n\nSee Nygard.\n");
    WriteFile(adr_dir_ + "/0002-use-mysql.md",
              "# 2. Use MySQL\n\n## Status\n\nSuperseded by [3. Use Postgres](0003-use-postgres.md)\n\n"
              "## Context\n\nWe need a database.\n\n## Decision\n\nMySQL.\n\n## Consequences\n\nNone.\n");
    WriteFile(adr_dir_ + "/0003-use-postgres.md",
              "# 3. Use Postgres\n\n## Status\n\nAccepted\n\nSupersedes [2. Use MySQL](0002-use-mysql.md)\n\n"
              "## Context\n\nMySQL lacked transactional DDL.\n\n## Decision\n\nPostgres.\n\n"
              "## Alternatives\n\n- SQLite: no server-side concurrency\n");
    WriteFile(adr_dir_ + "/0004-маршрут.md",
              "# 4. Маршрут через північ\n\n## Status\n\nProposed\n\n## Context\n\nПівденний сектор закритий.\n\n"
              "## Decision\n\nЙдемо північним маршрутом.\n");
    WriteFile(adr_dir_ + "/README.md", "# Decisions\n\nThis folder holds ADRs.\n");
  }

  Result<AdrImportReport> Import(const AdrImportOptions& o = {}) {
    return ImportAdrDirectory(*engine_, scope_, adr_dir_, o, "importer");
  }

  std::string adr_dir_;
};

TEST_F(AdrImportTest, ImportsLinksAndIsIdempotent) {
  AdrImportOptions o;
  o.component = "platform";
  ASSERT_OK_AND_ASSIGN(AdrImportReport first, Import(o));
  EXPECT_EQ(first.added, 4);
  EXPECT_EQ(first.updated, 0);
  ASSERT_EQ(first.entries.size(), 4u);  // README skipped
  EXPECT_EQ(first.entries[0].title, "Record architecture decisions");
  bool warned_consequences = false;
  for (const std::string& w : first.warnings) warned_consequences |= Contains(w, "0004-маршрут.md: no Consequences");
  EXPECT_TRUE(warned_consequences);

  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  ASSERT_EQ(all.size(), 4u);
  std::map<int, Decision> by_number;
  for (const Decision& d : all) by_number[d.adr_number] = d;
  EXPECT_EQ(by_number[1].decided_at, *ParseIso8601("2016-02-12"));
  EXPECT_EQ(by_number[1].component, "platform");
  ASSERT_EQ(by_number[1].provenance.size(), 1u);
  EXPECT_EQ(by_number[1].provenance[0].type, "document");
  EXPECT_EQ(by_number[1].provenance[0].ref,
            fs::weakly_canonical(adr_dir_ + "/0001-record-architecture-decisions.md").string());
  EXPECT_EQ(by_number[2].status, DecisionStatus::kSuperseded);
  EXPECT_EQ(by_number[2].superseded_by, by_number[3].id);
  EXPECT_EQ(by_number[3].supersedes, by_number[2].id);
  EXPECT_EQ(by_number[3].alternatives, (std::vector<Alternative>{{"SQLite", "no server-side concurrency"}}));
  EXPECT_EQ(by_number[4].title, "Маршрут через північ");
  EXPECT_EQ(by_number[4].status, DecisionStatus::kProposed);

  // Re-import: nothing new, nothing changed, the same ids.
  ASSERT_OK_AND_ASSIGN(AdrImportReport second, Import(o));
  EXPECT_EQ(second.added, 0);
  EXPECT_EQ(second.updated, 0);
  EXPECT_EQ(second.unchanged, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(second.entries[i].id, first.entries[i].id);
  ASSERT_OK_AND_ASSIGN(auto again, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(again.size(), 4u);
  for (const Decision& d : again) EXPECT_EQ(d.seq, by_number[d.adr_number].seq) << d.title;

  // A changed file is updated in place.
  WriteFile(adr_dir_ + "/0004-маршрут.md",
            "# 4. Маршрут через північ\n\n## Status\n\nAccepted\n\n## Context\n\nПівденний сектор закритий.\n\n"
            "## Decision\n\nЙдемо північним маршрутом.\n\n## Consequences\n\nДовше на 20 хвилин.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport third, Import(o));
  EXPECT_EQ(third.added, 0);
  EXPECT_EQ(third.updated, 1);
  EXPECT_EQ(third.unchanged, 3);
  ASSERT_OK_AND_ASSIGN(Decision four, GetDecision(*engine_, scope_, by_number[4].id, Admin()));
  EXPECT_EQ(four.status, DecisionStatus::kAccepted);
  EXPECT_EQ(four.consequences, "Довше на 20 хвилин.");
  EXPECT_EQ(four.created_at, by_number[4].created_at);
  ASSERT_OK_AND_ASSIGN(auto after, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(after.size(), 4u);
}

// Issue 19: one bad file no longer fails the folder. The rest is imported;
// each failure names its file and reason; the bad file changes nothing.
TEST_F(AdrImportTest, ABadFileFailsAloneNamingItsReason) {
  WriteFile(adr_dir_ + "/0005-broken.md", "# 5. Broken\n\n## Context\n\nbad \xFF byte\n\n## Decision\n\nd\n");
  WriteFile(adr_dir_ + "/0006-empty.md", "# 6. Only a title\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 4);
  EXPECT_EQ(r.failed, 2);
  std::map<std::string, AdrImportEntry> by_name;
  for (const AdrImportEntry& e : r.entries) by_name[fs::path(e.file).filename().string()] = e;
  EXPECT_EQ(by_name["0005-broken.md"].action, "failed");
  EXPECT_TRUE(Contains(by_name["0005-broken.md"].error, "invalid UTF-8")) << by_name["0005-broken.md"].error;
  EXPECT_EQ(by_name["0006-empty.md"].action, "failed");
  EXPECT_TRUE(Contains(by_name["0006-empty.md"].error, "no text to take a decision from"));
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(all.size(), 4u);
  const nlohmann::json j = AdrImportReportToJson(r);
  EXPECT_EQ(j["failed"], 2);

  // A file that imported once and then breaks keeps its record as it was.
  const std::string one = adr_dir_ + "/0001-record-architecture-decisions.md";
  ASSERT_OK_AND_ASSIGN(Decision before, GetDecision(*engine_, scope_, by_name["0001-record-architecture-decisions.md"].id, Admin()));
  WriteFile(one, "# 1. Broken now\n\xC3\x28\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport again, Import());
  EXPECT_EQ(again.failed, 3);
  EXPECT_EQ(again.updated, 0);
  ASSERT_OK_AND_ASSIGN(Decision after, GetDecision(*engine_, scope_, before.id, Admin()));
  EXPECT_EQ(after.seq, before.seq);
  EXPECT_EQ(after.title, "Record architecture decisions");
}

// Re-importing unchanged files with another operator changes nothing (not
// even who decided); a changed file is the next revision, with who imported
// it.
TEST_F(AdrImportTest, ReimportKeepsDeciderAndCountsRevisions) {
  AdrImportOptions ann;
  ann.decided_by = "ann";
  ASSERT_OK_AND_ASSIGN(AdrImportReport first, ImportAdrDirectory(*engine_, scope_, adr_dir_, ann, "ann"));
  EXPECT_EQ(first.added, 4);
  AdrImportOptions bob;
  bob.decided_by = "bob";
  ASSERT_OK_AND_ASSIGN(AdrImportReport second, ImportAdrDirectory(*engine_, scope_, adr_dir_, bob, "bob"));
  EXPECT_EQ(second.unchanged, 4);
  EXPECT_EQ(second.updated, 0);
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  for (const Decision& d : all) {
    EXPECT_EQ(d.decided_by, "ann") << d.title;
    ASSERT_EQ(d.revisions.size(), 1u) << d.title;
    EXPECT_EQ(d.revisions[0].revision, 1);
    EXPECT_EQ(d.revisions[0].by, "ann");
  }
  WriteFile(adr_dir_ + "/0004-маршрут.md",
            "# 4. Маршрут через північ\n\n## Status\n\nAccepted\n\n## Context\n\nПівденний сектор закритий.\n\n"
            "## Decision\n\nЙдемо північним маршрутом.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport third, ImportAdrDirectory(*engine_, scope_, adr_dir_, bob, "bob"));
  EXPECT_EQ(third.updated, 1);
  EXPECT_EQ(third.unchanged, 3);
  ASSERT_OK_AND_ASSIGN(Decision four, GetDecision(*engine_, scope_, third.entries[3].id, Admin()));
  EXPECT_EQ(four.status, DecisionStatus::kAccepted);
  EXPECT_EQ(four.decided_by, "ann");  // the ADR names none; the first import's stays
  ASSERT_EQ(four.revisions.size(), 2u);
  EXPECT_EQ(four.revisions[1].revision, 2);
  EXPECT_EQ(four.revisions[1].by, "bob");
}

// Supersede links written in the ways real collections write them, linked
// both ways; one that names no file of the folder is a warning.
TEST_F(AdrImportTest, SupersedeFormsAreLinkedBothWays) {
  const std::string dir = dir_.path() + "/decisions";
  fs::create_directories(dir);
  WriteFile(dir + "/adr013-use-node-fetch.md",
            "---\nid: adrs-adr013\ntitle: 'ADR013: Proper use of HTTP fetching libraries'\n---\n\n"
            ":::note Superseded\n\nThis ADR has been superseded by [ADR014](./adr014-use-fetch.md) and no longer "
            "applies.\n\n:::\n\n## Context\n\nMany HTTP packages.\n\n## Decision\n\nUse node-fetch.\n");
  WriteFile(dir + "/adr014-use-fetch.md",
            "---\nid: adrs-adr014\ntitle: 'ADR014: Use fetch'\n---\n\n## Context\n\nNode has fetch now.\n\n"
            "## Decision\n\nUse the native fetch.\n");
  WriteFile(dir + "/0020-old-cache.md", "# [Superseded] Old cache\n\n## Context\n\nc\n\n## Decision\n\nd\n");
  WriteFile(dir + "/0021-new-cache.md",
            "---\nstatus: accepted\nsupersedes: 0020-old-cache.md\n---\n# New cache\n\n## Context\n\nc\n\n"
            "## Decision\n\nd\n");
  WriteFile(dir + "/0030-gone.md", "# Gone\n\n## Status\n\nSuperseded by [ADR 99](0099-missing.md)\n\n"
                                  "## Context\n\nc\n\n## Decision\n\nd\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, ImportAdrDirectory(*engine_, scope_, dir, {}, "importer"));
  EXPECT_EQ(r.added, 5);
  std::map<std::string, std::string> id;
  for (const AdrImportEntry& e : r.entries) id[fs::path(e.file).filename().string()] = e.id;
  ASSERT_OK_AND_ASSIGN(Decision d13, GetDecision(*engine_, scope_, id["adr013-use-node-fetch.md"], Admin()));
  ASSERT_OK_AND_ASSIGN(Decision d14, GetDecision(*engine_, scope_, id["adr014-use-fetch.md"], Admin()));
  EXPECT_EQ(d13.title, "Proper use of HTTP fetching libraries");
  EXPECT_EQ(d13.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(d13.superseded_by, d14.id);
  EXPECT_EQ(d14.supersedes, d13.id);
  EXPECT_EQ(d14.status, DecisionStatus::kProposed);
  ASSERT_OK_AND_ASSIGN(Decision d20, GetDecision(*engine_, scope_, id["0020-old-cache.md"], Admin()));
  ASSERT_OK_AND_ASSIGN(Decision d21, GetDecision(*engine_, scope_, id["0021-new-cache.md"], Admin()));
  EXPECT_EQ(d20.status, DecisionStatus::kSuperseded);
  EXPECT_EQ(d20.superseded_by, d21.id);
  EXPECT_EQ(d21.supersedes, d20.id);
  EXPECT_EQ(d21.status, DecisionStatus::kAccepted);
  ASSERT_OK_AND_ASSIGN(Decision d30, GetDecision(*engine_, scope_, id["0030-gone.md"], Admin()));
  EXPECT_EQ(d30.status, DecisionStatus::kSuperseded);
  EXPECT_TRUE(d30.superseded_by.empty());
  bool warned = false;
  for (const std::string& w : r.warnings) {
    warned |= Contains(w, "0030-gone.md: superseded by '0099-missing.md', which is not an imported ADR");
  }
  EXPECT_TRUE(warned);
  // Search serves the successor, not the superseded one.
  DecisionFilter f;
  f.query = "HTTP fetch library";
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  for (const Decision& d : hits) EXPECT_NE(d.id, d13.id);
}

// An ADR that writes no date is dated by its file's first commit when the
// folder is in a git repository; a revision names the latest commit's author.
TEST_F(AdrImportTest, DatesFromTheFirstCommitWhenTheAdrHasNone) {
  ASSERT_OK_AND_ASSIGN(testing::ScriptedRepo repo, testing::ScriptedRepo::Init(dir_.path() + "/repo"));
  const int64_t t1 = *ParseIso8601("2021-01-04") / 1000, t2 = *ParseIso8601("2021-06-01") / 1000;
  ASSERT_OK(repo.Commit({{"docs/adr/0001-undated.md", "# 1. Undated\n\n## Context\n\nc\n\n## Decision\n\nd\n"},
                         {"docs/adr/0002-dated.md",
                          "# 2. Dated\n\nDate: 2019-05-05\n\n## Context\n\nc\n\n## Decision\n\nd\n"}},
                        "add ADRs", "Ann", t1)
                .status());
  ASSERT_OK(repo.Commit({{"docs/adr/0001-undated.md", "# 1. Undated\n\n## Context\n\nc2\n\n## Decision\n\nd\n"}},
                        "edit ADR 1", "Bob", t2)
                .status());
  // A file never committed has no git date.
  WriteFile(dir_.path() + "/repo/docs/adr/0003-new.md", "# 3. New\n\n## Context\n\nc\n\n## Decision\n\nd\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r,
                       ImportAdrDirectory(*engine_, scope_, dir_.path() + "/repo/docs/adr", {}, "importer"));
  ASSERT_EQ(r.added, 3);
  ASSERT_OK_AND_ASSIGN(Decision one, GetDecision(*engine_, scope_, r.entries[0].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision two, GetDecision(*engine_, scope_, r.entries[1].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision three, GetDecision(*engine_, scope_, r.entries[2].id, Admin()));
  EXPECT_EQ(one.decided_at, t1 * 1000);
  EXPECT_EQ(two.decided_at, *ParseIso8601("2019-05-05"));
  EXPECT_NE(three.decided_at, t1 * 1000);
  ASSERT_EQ(one.revisions.size(), 1u);
  EXPECT_EQ(one.revisions[0].author, "Bob");
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= Contains(w, "0003-new.md: no date");
  EXPECT_TRUE(warned);
}

// One ADR a folder (FOLDER/index.md, as Docusaurus and Hugo sites keep them):
// each folder's index file is an ADR named after the folder, and links to
// "../FOLDER/index.md" resolve.
TEST_F(AdrImportTest, AnAdrInAFolderOfItsOwn) {
  const std::string dir = dir_.path() + "/site";
  fs::create_directories(dir + "/0001-use-rest");
  fs::create_directories(dir + "/0002-use-grpc");
  fs::create_directories(dir + "/assets");
  WriteFile(dir + "/0001-use-rest/index.md", "---\nstatus: accepted\n---\n\n## Context\n\nc\n\n## Decision\n\nREST.\n");
  WriteFile(dir + "/0002-use-grpc/index.md",
            "# Use gRPC\n\nStatus: accepted\n\nSupersedes [ADR 1](../0001-use-rest/index.md)\n\n## Context\n\nc\n\n"
            "## Decision\n\ngRPC.\n");
  WriteFile(dir + "/assets/diagram.txt", "not an ADR");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, ImportAdrDirectory(*engine_, scope_, dir, {}, "importer"));
  ASSERT_EQ(r.added, 2) << (r.entries.empty() ? "" : r.entries[0].error);
  ASSERT_OK_AND_ASSIGN(Decision rest, GetDecision(*engine_, scope_, r.entries[0].id, Admin()));
  ASSERT_OK_AND_ASSIGN(Decision grpc, GetDecision(*engine_, scope_, r.entries[1].id, Admin()));
  EXPECT_EQ(rest.title, "Use rest");  // from the folder's name
  EXPECT_EQ(rest.adr_number, 1);
  EXPECT_EQ(rest.provenance[0].ref, fs::weakly_canonical(dir).string() + "/0001-use-rest/index.md");
  EXPECT_EQ(grpc.adr_number, 2);
  EXPECT_EQ(rest.superseded_by, grpc.id);
  EXPECT_EQ(grpc.supersedes, rest.id);
  // Names sent as text follow the same rule.
  ASSERT_OK(ImportAdrFiles(*engine_, scope_, "site", {TextFile("0003-x/README.md", "# X\n\n## Decision\n\nd\n")},
                           {}, "api")
                .status());
  EXPECT_EQ(ImportAdrFiles(*engine_, scope_, "site", {TextFile("0003-x/notes.md", "# X\n\n## Decision\n\nd\n")}, {},
                           "api")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// A section the importer does not map is kept in the decision, and search
// finds it.
TEST_F(AdrImportTest, UnmappedSectionsAreKeptAndSearchable) {
  WriteFile(adr_dir_ + "/0009-entity-references.md",
            "# 9. Entity references\n\n## Status\n\nAccepted\n\n## Context\n\nEntities point at each other.\n\n"
            "## Decision\n\nUse kind:namespace/name strings.\n\n## Entity References in URLs\n\n"
            "Percent-encode the colon and slash when a reference travels in a query parameter.\n");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 5);
  ASSERT_OK_AND_ASSIGN(Decision d, GetDecision(*engine_, scope_, r.entries[4].id, Admin()));
  ASSERT_EQ(d.sections.size(), 1u);
  EXPECT_EQ(d.sections[0].heading, "Entity References in URLs");
  EXPECT_TRUE(Contains(d.sections[0].text, "Percent-encode the colon"));
  DecisionFilter f;
  f.query = "percent-encode query parameter";
  f.limit = 1;
  ASSERT_OK_AND_ASSIGN(auto hits, ListDecisions(*engine_, scope_, f, Admin()));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].id, d.id);
}

TEST_F(AdrImportTest, DryRunWritesNothingAndMissingDirIsNotFound) {
  AdrImportOptions o;
  o.dry_run = true;
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import(o));
  EXPECT_EQ(r.added, 4);
  ASSERT_OK_AND_ASSIGN(auto all, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_TRUE(all.empty());
  EXPECT_EQ(ImportAdrDirectory(*engine_, scope_, dir_.path() + "/nope", {}, "x").status().code(),
            StatusCode::kNotFound);
}

TEST_F(AdrImportTest, AccessLevelAppliesToImportedDecisions) {
  AdrImportOptions o;
  o.access_level = 6;
  ASSERT_OK(Import(o).status());
  ASSERT_OK_AND_ASSIGN(auto low, ListDecisions(*engine_, scope_, {}, Asker{"", 5}));
  EXPECT_TRUE(low.empty());
  ASSERT_OK_AND_ASSIGN(auto high, ListDecisions(*engine_, scope_, {}, Asker{"", 6}));
  EXPECT_EQ(high.size(), 4u);
}

// Files given as text (the REST and MCP faces) import as the folder's files
// would: the same ids, so a later import of either kind updates them.
// A link out of the folder is not followed (issue 24: a link to /etc/passwd
// was parsed as an ADR); the import warns and takes the rest.
TEST_F(AdrImportTest, LinksOutOfTheFolderAreNotFollowed) {
  const std::string outside = dir_.path() + "/elsewhere.md";
  WriteFile(outside, "# 9. Leaked\n\n## Status\n\nAccepted\n\n## Decision\n\nSecrets.\n");
  fs::create_symlink(outside, adr_dir_ + "/0009-leaked.md");
  ASSERT_OK_AND_ASSIGN(AdrImportReport r, Import());
  EXPECT_EQ(r.added, 4);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("0009-leaked.md: a symbolic link to"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("not followed"), std::string::npos);
  for (const auto& e : r.entries) EXPECT_EQ(e.file.find("0009"), std::string::npos) << e.file;
}

TEST_F(AdrImportTest, FilesAsTextMatchTheFolderImport) {
  ASSERT_OK_AND_ASSIGN(AdrImportReport from_dir, Import());
  ASSERT_EQ(from_dir.added, 4);
  std::vector<AdrFile> files;
  for (const auto& entry : fs::directory_iterator(adr_dir_)) {
    if (entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    AdrFile file;
    file.name = entry.path().filename().string();
    file.text = text.str();
    files.push_back(std::move(file));
  }
  const std::string folder = fs::weakly_canonical(adr_dir_).string();
  ASSERT_OK_AND_ASSIGN(AdrImportReport as_text, ImportAdrFiles(*engine_, scope_, folder, files, {}, "api"));
  EXPECT_EQ(as_text.added, 0);
  EXPECT_EQ(as_text.unchanged, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(as_text.entries[i].id, from_dir.entries[i].id);
  ASSERT_OK_AND_ASSIGN(AdrImportReport elsewhere, ImportAdrFiles(*engine_, scope_, "repo/docs/adr", files, {}, "api"));
  EXPECT_EQ(elsewhere.added, 4);  // another folder: other decisions
  EXPECT_EQ(elsewhere.entries[0].file, "repo/docs/adr/0001-record-architecture-decisions.md");

  // Bad names fail the whole import and write nothing.
  ASSERT_OK_AND_ASSIGN(auto before, ListDecisions(*engine_, scope_, {}, Admin()));
  for (const std::vector<AdrFile>& bad :
       {std::vector<AdrFile>{TextFile("../0009-x.md", files[0].text)}, std::vector<AdrFile>{TextFile("", files[0].text)},
        std::vector<AdrFile>{TextFile("a.md", files[0].text), TextFile("a.md", files[1].text)}}) {
    const Status st = ImportAdrFiles(*engine_, scope_, "other", bad, {}, "api").status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  }
  EXPECT_EQ(ImportAdrFiles(*engine_, scope_, "", files, {}, "api").status().code(), StatusCode::kInvalidArgument);
  // A folder is checked as the names are (issue 24: "../../../etc" was stored
  // as provenance).
  for (const char* bad_folder : {"../../../etc", "docs/../../etc", "./adr", "docs//adr", "/etc/..", "docs\\adr",
                                 "adr\n", ".."}) {
    const Status st = ImportAdrFiles(*engine_, scope_, bad_folder, files, {}, "api").status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad_folder;
    EXPECT_NE(st.message().find("plain names"), std::string::npos) << st.message();
  }
  ASSERT_OK_AND_ASSIGN(auto after, ListDecisions(*engine_, scope_, {}, Admin()));
  EXPECT_EQ(after.size(), before.size());
}

}  // namespace
}  // namespace msp
