// Document ingestion into an engine: every format's chunks and provenance,
// atomic replacement of a changed file, skipping an unchanged one, damaged
// files reported while the others go on, and bad input writing nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "ingest/document.h"
#include "ingest/fixtures.h"
#include "ingest/ingest.h"
#include "tests/support/test_util.h"
#include "working/tokens.h"

namespace msp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class DocumentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Options o;
    o.store.data_dir = dir_.path() + "/data";
    o.store.synchronous = "normal";
    o.actor = "tester";
    ASSERT_OK_AND_ASSIGN(engine_, MemoryLayer::Open(o));
    scope_.mission = "plant";
    docs_ = fs::canonical(dir_.path()).string() + "/docs";
    options_.chunk_tokens = 64;
    options_.overlap_tokens = 8;
  }

  Result<DocumentIngestReport> Ingest(const std::vector<std::string>& paths, MemoryLayer* engine = nullptr) {
    return IngestDocuments(engine == nullptr ? *engine_ : *engine, scope_, paths, counter_, options_, "tester");
  }

  // The stored chunks of `path`, by index.
  std::vector<Memory> ChunksOf(const std::string& path) {
    ListRequest r;
    r.scope = scope_;
    r.filter.kinds = {Kind::kDocumentChunk};
    r.limit = 0;
    Result<std::vector<Memory>> all = engine_->List(r);
    EXPECT_TRUE(all.ok());
    std::vector<std::pair<int, Memory>> mine;
    for (Memory& m : *all) {
      const json body = json::parse(m.body_json);
      if (body["path"] == path) mine.emplace_back(body["index"].get<int>(), std::move(m));
    }
    std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Memory> out;
    for (auto& [i, m] : mine) out.push_back(std::move(m));
    return out;
  }

  int64_t RecordCount() {
    Result<Stats> s = engine_->GetStats(Namespace{});
    EXPECT_TRUE(s.ok());
    return s.ok() ? s->records : -1;
  }

  testing::TempDir dir_{"ingest-docs"};
  std::unique_ptr<MemoryLayer> engine_;
  Namespace scope_;
  std::string docs_;
  EstimateTokenCounter counter_;
  DocumentIngestOptions options_;
};

std::string Words(int n, const std::string& word) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i > 0 ? " " : "") + word + std::to_string(i);
  return s + ".";
}

TEST_F(DocumentsTest, EveryFormatWithProvenance) {
  ASSERT_OK(testing::WriteFile(docs_ + "/manual.pdf", testing::MakePdf({{"Pump manual page one"}, {"Valve torque 40 Nm"}})));
  ASSERT_OK(testing::WriteDocx(docs_ + "/notes.docx", {{"Heading1", "Shift notes"}, {"", "Boiler two was cold."}}));
  ASSERT_OK(testing::WriteFile(docs_ + "/guide.md", "# Guide\n\nIntro.\n\n## Install\n\nRun the installer twice.\n"));
  ASSERT_OK(testing::WriteFile(docs_ + "/page.html", "<h1>Alarms</h1><script>x()</script><p>Red means stop.</p>"));
  ASSERT_OK(testing::WriteFile(docs_ + "/sub/log.txt", "Turbine restarted at noon."));
  ASSERT_OK(testing::WriteFile(docs_ + "/.hidden/secret.md", "# Hidden\n\nnever ingested"));
  ASSERT_OK(testing::WriteFile(docs_ + "/.dotfile.txt", "never ingested"));
  ASSERT_OK(testing::WriteFile(docs_ + "/image.png", std::string("\x89PNG\r\n\x1a\n\0\0", 10)));

  std::vector<std::string> progress;
  options_.tags = {"handbook"};
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r,
                       IngestDocuments(*engine_, scope_, {docs_}, counter_, options_, "tester",
                                       [&](size_t done, size_t total, const FileOutcome& f) {
                                         progress.push_back(std::to_string(done) + "/" + std::to_string(total) + " " +
                                                            f.action);
                                       }));
  EXPECT_EQ(r.ingested, 5);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.skipped, 1);  // image.png
  EXPECT_EQ(r.unchanged, 0);
  ASSERT_EQ(progress.size(), 6u);
  EXPECT_EQ(progress.back().substr(0, 4), "6/6 ");
  for (const FileOutcome& f : r.files) EXPECT_EQ(f.path.find(".hidden"), std::string::npos) << f.path;
  for (const FileOutcome& f : r.files) EXPECT_EQ(f.path.find(".dotfile"), std::string::npos) << f.path;

  // PDF: one chunk per page, the page in provenance and body.
  std::vector<Memory> pdf = ChunksOf(docs_ + "/manual.pdf");
  ASSERT_EQ(pdf.size(), 2u);
  EXPECT_EQ(pdf[1].kind, Kind::kDocumentChunk);
  EXPECT_EQ(pdf[1].layer, Layer::kDomain);
  EXPECT_EQ(pdf[1].ns.mission, "plant");
  EXPECT_NE(pdf[1].text.find("Valve torque 40 Nm"), std::string::npos);
  ASSERT_EQ(pdf[1].provenance.size(), 1u);
  EXPECT_EQ(pdf[1].provenance[0].type, "document");
  EXPECT_EQ(pdf[1].provenance[0].ref, docs_ + "/manual.pdf");
  EXPECT_EQ(pdf[1].provenance[0].detail.rfind("page 2 · chars ", 0), 0u) << pdf[1].provenance[0].detail;
  const json pb = json::parse(pdf[1].body_json);
  EXPECT_EQ(pb["page"], 2);
  EXPECT_EQ(pb["format"], "pdf");
  EXPECT_EQ(pb["chunk_count"], 2);
  EXPECT_EQ(pdf[1].id, DocumentChunkId(pdf[1].ns, docs_ + "/manual.pdf", 1));
  EXPECT_NE(std::find(pdf[1].tags.begin(), pdf[1].tags.end(), "handbook"), pdf[1].tags.end());

  // The offsets point into the extracted text.
  ASSERT_OK_AND_ASSIGN(ExtractedDocument md_doc,
                       ExtractMarkdown("# Guide\n\nIntro.\n\n## Install\n\nRun the installer twice.\n"));
  std::vector<Memory> md = ChunksOf(docs_ + "/guide.md");
  ASSERT_EQ(md.size(), 2u);
  const json mb = json::parse(md[1].body_json);
  EXPECT_EQ(mb["section"], "Guide > Install");
  EXPECT_TRUE(mb["page"].is_null());
  const size_t start = mb["start"], end = mb["end"];
  EXPECT_EQ(md_doc.text.substr(start, end - start), md[1].text);
  EXPECT_EQ(md[1].text, "Install\n\nRun the installer twice.");
  EXPECT_EQ(md[1].provenance[0].detail,
            "Guide > Install · chars " + std::to_string(start) + "-" + std::to_string(end));

  std::vector<Memory> docx = ChunksOf(docs_ + "/notes.docx");
  ASSERT_EQ(docx.size(), 1u);
  EXPECT_EQ(docx[0].text, "Shift notes\n\nBoiler two was cold.");
  EXPECT_EQ(json::parse(docx[0].body_json)["section"], "Shift notes");

  std::vector<Memory> html = ChunksOf(docs_ + "/page.html");
  ASSERT_EQ(html.size(), 1u);
  EXPECT_EQ(html[0].text, "Alarms\n\nRed means stop.");

  std::vector<Memory> txt = ChunksOf(docs_ + "/sub/log.txt");
  ASSERT_EQ(txt.size(), 1u);
  EXPECT_EQ(txt[0].provenance[0].detail, "chars 0-26");

  // Found by search in the mission.
  RetrieveRequest q;
  q.scope = scope_;
  q.query = "valve torque";
  ASSERT_OK_AND_ASSIGN(std::vector<SearchHit> hits, engine_->Retrieve(q));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].memory.id, pdf[1].id);
}

TEST_F(DocumentsTest, ChangedFileIsReplacedInOneCommit) {
  const std::string path = docs_ + "/long.txt";
  std::string v1;
  for (int p = 0; p < 6; ++p) v1 += Words(40, "alpha") + "\n\n";
  ASSERT_OK(testing::WriteFile(path, v1));
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r1, Ingest({path}));
  ASSERT_EQ(r1.ingested, 1);
  const int before = static_cast<int>(ChunksOf(path).size());
  ASSERT_GE(before, 4);
  EXPECT_EQ(r1.chunks_written, before);

  const std::string v2 = Words(30, "beta") + "\n\n" + Words(30, "gamma");
  ASSERT_OK(testing::WriteFile(path, v2));
  testing::RecordingLayer recorder(*engine_);
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r2, Ingest({path}, &recorder));
  EXPECT_EQ(r2.ingested, 1);
  EXPECT_EQ(r2.replaced, 1);
  ASSERT_EQ(recorder.batches.size(), 1u);  // puts and deletes in one atomic Commit
  const std::vector<Memory> after = ChunksOf(path);
  ASSERT_GE(after.size(), 2u);
  EXPECT_LT(after.size(), static_cast<size_t>(before));
  EXPECT_EQ(recorder.batches[0].puts.size(), after.size());
  EXPECT_EQ(recorder.batches[0].deletes.size(), static_cast<size_t>(before) - after.size());
  EXPECT_EQ(r2.chunks_deleted, before - static_cast<int>(after.size()));
  for (const Memory& m : after) {
    EXPECT_EQ(m.text.find("alpha"), std::string::npos) << "an old chunk survived: " << m.text;
    EXPECT_EQ(json::parse(m.body_json)["chunk_count"], after.size());
  }
  EXPECT_EQ(RecordCount(), static_cast<int64_t>(after.size()));
}

TEST_F(DocumentsTest, FailedCommitLeavesTheOldChunks) {
  const std::string path = docs_ + "/a.md";
  ASSERT_OK(testing::WriteFile(path, "# One\n\n" + Words(50, "old") + "\n\n# Two\n\n" + Words(50, "old")));
  ASSERT_OK(Ingest({path}).status());
  const std::vector<Memory> old = ChunksOf(path);
  ASSERT_GE(old.size(), 2u);
  ASSERT_OK(testing::WriteFile(path, "# Only\n\nnew text"));
  testing::RecordingLayer failing(*engine_);
  failing.fail_commits = true;
  Result<DocumentIngestReport> r = Ingest({path}, &failing);
  ASSERT_FALSE(r.ok());  // a store failure ends the run
  EXPECT_EQ(ChunksOf(path), old);
}

TEST_F(DocumentsTest, UnchangedFileIsSkipped) {
  const std::string path = docs_ + "/a.md";
  ASSERT_OK(testing::WriteFile(path, "# Title\n\n" + Words(100, "word")));
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r1, Ingest({path}));
  ASSERT_EQ(r1.ingested, 1);
  const std::vector<Memory> first = ChunksOf(path);
  testing::RecordingLayer recorder(*engine_);
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r2, Ingest({path}, &recorder));
  EXPECT_EQ(r2.unchanged, 1);
  EXPECT_EQ(r2.ingested, 0);
  EXPECT_EQ(r2.chunks_written, 0);
  EXPECT_TRUE(recorder.batches.empty());
  EXPECT_EQ(ChunksOf(path), first);  // same records, same seq

  // Other chunking settings re-chunk the same bytes.
  options_.chunk_tokens = 128;
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r3, Ingest({path}));
  EXPECT_EQ(r3.replaced, 1);
  EXPECT_LT(ChunksOf(path).size(), first.size());
}

TEST_F(DocumentsTest, DamagedFilesAreReportedAndOthersIngested) {
  const std::string pdf = testing::MakePdf({{"fine"}});
  ASSERT_OK(testing::WriteFile(docs_ + "/broken.pdf", "%PDF-1.4\nnot really a pdf\n"));
  ASSERT_OK(testing::WriteFile(docs_ + "/broken.docx", "PK\x03\x04 word/document.xml truncated"));
  ASSERT_OK(testing::WriteFile(docs_ + "/good.md", "# Good\n\nThis one is fine."));
  ASSERT_OK(testing::WriteFile(docs_ + "/good.pdf", pdf));
  ASSERT_OK(testing::WriteFile(docs_ + "/blob.bin", std::string("\x01\x02\0\x03", 4)));
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r, Ingest({docs_, docs_ + "/blob.bin"}));
  EXPECT_EQ(r.ingested, 2);
  EXPECT_EQ(r.failed, 3);  // broken.pdf, broken.docx, and blob.bin (named, unsupported)
  std::map<std::string, FileOutcome> by_name;
  for (const FileOutcome& f : r.files) by_name[fs::path(f.path).filename().string()] = f;
  EXPECT_EQ(by_name["broken.pdf"].action, "failed");
  EXPECT_NE(by_name["broken.pdf"].error.find("pdf"), std::string::npos) << by_name["broken.pdf"].error;
  EXPECT_EQ(by_name["broken.docx"].action, "failed");
  EXPECT_NE(by_name["broken.docx"].error.find("docx"), std::string::npos) << by_name["broken.docx"].error;
  EXPECT_EQ(by_name["blob.bin"].action, "failed");
  EXPECT_NE(by_name["blob.bin"].error.find("unsupported"), std::string::npos);
  EXPECT_EQ(by_name["good.md"].action, "ingested");
  EXPECT_EQ(ChunksOf(docs_ + "/good.md").size(), 1u);
  EXPECT_EQ(ChunksOf(docs_ + "/good.pdf").size(), 1u);
  EXPECT_TRUE(ChunksOf(docs_ + "/broken.pdf").empty());
}

// A walk does not follow a symbolic link out of the directory given (issue
// 24: a link to /etc/passwd was ingested); a link within it is read, and a
// file named on the command line is read wherever it lives.
TEST_F(DocumentsTest, LinksOutOfTheDirectoryAreNotFollowed) {
  const std::string outside = fs::canonical(dir_.path()).string() + "/secret.txt";
  ASSERT_OK(testing::WriteFile(outside, "The root password is hunter2."));
  ASSERT_OK(testing::WriteFile(docs_ + "/good.md", "# Good\n\nThis one is fine."));
  fs::create_directories(docs_ + "/sub");
  fs::create_symlink(outside, docs_ + "/sub/passwd.txt");
  fs::create_symlink(docs_ + "/good.md", docs_ + "/sub/again.md");
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport r, Ingest({docs_}));
  EXPECT_EQ(r.ingested, 1);
  EXPECT_EQ(r.skipped, 1);
  bool reported = false;
  for (const FileOutcome& f : r.files) {
    if (f.path != docs_ + "/sub/passwd.txt") continue;
    reported = true;
    EXPECT_EQ(f.action, "skipped");
    EXPECT_NE(f.error.find("symbolic link to " + outside), std::string::npos) << f.error;
  }
  EXPECT_TRUE(reported);
  EXPECT_TRUE(ChunksOf(outside).empty());
  EXPECT_EQ(ChunksOf(docs_ + "/good.md").size(), 1u);  // the link within: the same file, once
  ASSERT_OK_AND_ASSIGN(DocumentIngestReport named, Ingest({docs_ + "/sub/passwd.txt"}));
  EXPECT_EQ(named.ingested, 1);
}

TEST_F(DocumentsTest, BadInputWritesNothing) {
  ASSERT_OK(testing::WriteFile(docs_ + "/good.md", "# Good\n\nfine"));
  Result<DocumentIngestReport> missing = Ingest({docs_ + "/good.md", docs_ + "/nope.pdf"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.pdf"), std::string::npos);
  scope_.mission.clear();
  Result<DocumentIngestReport> no_mission = Ingest({docs_ + "/good.md"});
  ASSERT_FALSE(no_mission.ok());
  EXPECT_EQ(no_mission.status().code(), StatusCode::kInvalidArgument);
  scope_.mission = "plant";
  options_.overlap_tokens = 40;
  Result<DocumentIngestReport> bad_overlap = Ingest({docs_ + "/good.md"});
  ASSERT_FALSE(bad_overlap.ok());
  EXPECT_NE(bad_overlap.status().message().find("ingest.overlap_tokens"), std::string::npos);
  EXPECT_EQ(RecordCount(), 0);
}

TEST_F(DocumentsTest, IdsAreDeterministic) {
  Namespace a{"default", "", "", "", "m1", ""};
  Namespace b{"default", "", "", "", "m2", ""};
  EXPECT_EQ(DocumentChunkId(a, "/x/y.md", 3), DocumentChunkId(a, "/x/y.md", 3));
  EXPECT_NE(DocumentChunkId(a, "/x/y.md", 3), DocumentChunkId(a, "/x/y.md", 4));
  EXPECT_NE(DocumentChunkId(a, "/x/y.md", 3), DocumentChunkId(b, "/x/y.md", 3));
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace msp
