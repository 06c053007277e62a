// The recent-prompts file: it answers only what the refs confirm, and the
// store's writers keep it current.
#include "coding/recent_prompts.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "coding/capture.h"
#include "coding/prompt_store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr TimeMs kT0 = 1764530000123;  // 2025-11-30

CapturedPrompt RecentTestPrompt(const std::string& text, TimeMs at, const std::string& repository) {
  CapturedPrompt p;
  p.text = text;
  p.at = at;
  p.session_id = "s";
  p.repository = repository;
  p.branch = "main";
  p.hook_event = "UserPromptSubmit";
  return p;
}

std::vector<std::string> RecentTexts(const std::vector<CapturedPrompt>& ps) {
  std::vector<std::string> out;
  for (const CapturedPrompt& p : ps) out.push_back(p.text);
  return out;
}

// The newest n of `repository` by List, most recent first: what the file must
// agree with.
std::vector<std::string> RecentListed(PromptStore& store, const std::string& repository, size_t n) {
  PromptFilter f;
  f.repository = repository;
  f.newest = n;
  Result<std::vector<CapturedPrompt>> r = store.List(f);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> out = RecentTexts(r.ok() ? *r : std::vector<CapturedPrompt>{});
  std::reverse(out.begin(), out.end());
  return out;
}

class RecentPromptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    path_ = dir_.path() + "/p.git";
    Result<std::unique_ptr<PromptStore>> s = PromptStore::Open(path_, true);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  CapturedPrompt Add(const std::string& text, TimeMs at, const std::string& repository = "/w/a") {
    Result<CapturedPrompt> r = store_->Append(RecentTestPrompt(text, at, repository));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CapturedPrompt{};
  }

  testing::TempDir dir_{"coding-recent"};
  std::string path_;
  std::unique_ptr<PromptStore> store_;
};

TEST_F(RecentPromptsTest, JsonRoundTripsAndTheParserRefusesOtherShapes) {
  RecentPrompt a;
  a.prompt = RecentTestPrompt("fix the \"cache\"\nnow ✓", kT0, "/w/a");
  a.prompt.ref = PromptRefName(kT0, 0xabc);
  a.prompt.id = std::string(40, 'f');
  a.prompt.session_id = "s9";
  RecentPrompt b = a;
  b.prompt.text.clear();
  b.text_omitted = true;
  ASSERT_OK_AND_ASSIGN(std::vector<RecentPrompt> back, ParseRecentPrompts(RecentPromptsJson({a, b})));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].prompt.text, a.prompt.text);
  EXPECT_EQ(back[0].prompt.ref, a.prompt.ref);
  EXPECT_EQ(back[0].prompt.id, a.prompt.id);
  EXPECT_EQ(back[0].prompt.at, kT0);
  EXPECT_EQ(back[0].prompt.session_id, "s9");
  EXPECT_EQ(back[0].prompt.repository, "/w/a");
  EXPECT_EQ(back[0].prompt.branch, "main");
  EXPECT_FALSE(back[0].text_omitted);
  EXPECT_TRUE(back[1].text_omitted);
  EXPECT_TRUE(back[1].prompt.text.empty());

  for (const char* bad : {"", "[]", "{\"format\":2,\"prompts\":[]}", "{\"format\":1}",
                          "{\"format\":1,\"prompts\":[1]}",
                          "{\"format\":1,\"prompts\":[{\"ref\":\"refs/heads/main\",\"id\":\"\",\"at\":1,\"agent\":\"\","
                          "\"session_id\":\"\",\"repository\":\"\",\"branch\":\"\",\"text\":\"\"}]}"}) {
    EXPECT_TRUE(ParseRecentPrompts(bad).status().IsInvalidArgument()) << bad;
  }
}

TEST_F(RecentPromptsTest, AnswersWhatListAnswersOnceRefreshed) {
  for (int i = 0; i < 10; ++i) Add("a" + std::to_string(i), kT0 + i * 1000, i % 3 == 0 ? "/w/b" : "/w/a");
  // No file yet: no answer.
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 3).has_value());
  ASSERT_OK(store_->RefreshRecent());
  for (const std::string& repo : {std::string("/w/a"), std::string("/w/b"), std::string("a"), std::string("/w/c")}) {
    auto fast = RecentPromptsFromFile(path_, repo, 3);
    ASSERT_TRUE(fast.has_value()) << repo;
    EXPECT_EQ(RecentTexts(*fast), RecentListed(*store_, repo, 3)) << repo;
  }
  auto fast = RecentPromptsFromFile(path_, "/w/a", 3);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(RecentTexts(*fast), (std::vector<std::string>{"a8", "a7", "a5"}));
  EXPECT_EQ((*fast)[0].id.size(), 40u);
  EXPECT_EQ((*fast)[0].at, kT0 + 8000);
  // A repository with fewer prompts than asked: all of them, complete.
  auto b = RecentPromptsFromFile(path_, "/w/b", 10);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(RecentTexts(*b), (std::vector<std::string>{"a9", "a6", "a3", "a0"}));
}

TEST_F(RecentPromptsTest, ARefTheFileDoesNotKnowOrNamesAnotherCommitMeansNoAnswer) {
  Add("old", kT0, "/w/a");
  CapturedPrompt other = Add("other", kT0 + 1000, "/w/b");
  ASSERT_OK(store_->RefreshRecent());
  ASSERT_TRUE(RecentPromptsFromFile(path_, "/w/a", 3).has_value());
  // Captured after the file was written (another repository's, even).
  Add("newer", kT0 + 2000, "/w/b");
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 3).has_value());
  ASSERT_OK(store_->RefreshRecent());
  auto fast = RecentPromptsFromFile(path_, "/w/a", 3);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(RecentTexts(*fast), (std::vector<std::string>{"old"}));

  // A ref moved to another commit (git update-ref by hand).
  CapturedPrompt a = Add("a1", kT0 + 3000, "/w/a");
  ASSERT_OK(store_->RefreshRecent());
  ASSERT_TRUE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  {
    std::ofstream ref(path_ + "/" + a.ref, std::ios::trunc);
    ref << other.id << "\n";
  }
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  // The refresh reads the moved ref again, and the file follows it.
  ASSERT_OK(store_->RefreshRecent());
  auto moved = RecentPromptsFromFile(path_, "/w/b", 1);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(RecentTexts(*moved), RecentListed(*store_, "/w/b", 1));

  // A damaged file: no answer, and the next refresh replaces it.
  {
    std::ofstream f(RecentPromptsPath(path_), std::ios::trunc);
    f << "{\"format\":1,\"prompts\":[";
  }
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/b", 1).has_value());
  ASSERT_OK(store_->RefreshRecent());
  EXPECT_TRUE(RecentPromptsFromFile(path_, "/w/b", 1).has_value());
}

TEST_F(RecentPromptsTest, ALongPromptIsLeftToTheRepository) {
  Add("short one", kT0, "/w/a");
  Add(std::string(kRecentPromptTextBytes + 1, 'x'), kT0 + 1000, "/w/a");
  Add("in b", kT0 + 2000, "/w/b");
  ASSERT_OK(store_->RefreshRecent());
  ASSERT_OK_AND_ASSIGN(std::vector<RecentPrompt> file, ReadRecentPromptsFile(path_));
  ASSERT_EQ(file.size(), 3u);
  EXPECT_TRUE(file[1].text_omitted);
  // /w/a's newest prompt is the long one: the file cannot show it.
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  EXPECT_TRUE(RecentPromptsFromFile(path_, "/w/b", 1).has_value());
}

TEST_F(RecentPromptsTest, PromptsOlderThanTheFileKeepsAreReadFromTheRepository) {
  Add("a's only", kT0, "/w/a");
  for (size_t i = 1; i <= kRecentPromptsKept; ++i) Add("b" + std::to_string(i), kT0 + i * 1000, "/w/b");
  ASSERT_OK(store_->RefreshRecent());
  ASSERT_OK_AND_ASSIGN(std::vector<RecentPrompt> file, ReadRecentPromptsFile(path_));
  EXPECT_EQ(file.size(), kRecentPromptsKept);
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  EXPECT_EQ(RecentListed(*store_, "/w/a", 1), (std::vector<std::string>{"a's only"}));
  auto b = RecentPromptsFromFile(path_, "/w/b", 2);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(RecentTexts(*b), RecentListed(*store_, "/w/b", 2));
}

TEST_F(RecentPromptsTest, PackedPromptRefsMeanNoAnswerAndNoFile) {
  CapturedPrompt a = Add("a", kT0, "/w/a");
  ASSERT_OK(store_->RefreshRecent());
  ASSERT_TRUE(fs::exists(RecentPromptsPath(path_)));
  {
    std::ofstream packed(path_ + "/packed-refs");
    packed << "# pack-refs with: peeled fully-peeled sorted \n" << a.id << " " << a.ref << "\n";
  }
  EXPECT_FALSE(NewestPromptRefs(path_, 10).has_value());
  EXPECT_FALSE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  ASSERT_OK(store_->RefreshRecent());
  EXPECT_FALSE(fs::exists(RecentPromptsPath(path_)));
}

TEST_F(RecentPromptsTest, TheSpoolImportWritesTheFile) {
  Add("before", kT0, "/w/a");
  // A repository of an earlier msp: no file; an import with nothing to do
  // writes it.
  ASSERT_FALSE(fs::exists(RecentPromptsPath(path_)));
  ASSERT_OK_AND_ASSIGN(SpoolImportReport none, ImportSpool(path_));
  EXPECT_EQ(none.imported, 0u);
  EXPECT_TRUE(none.recent_refreshed);
  ASSERT_TRUE(RecentPromptsFromFile(path_, "/w/a", 1).has_value());
  // A spooled prompt: imported, and the file shows it.
  ASSERT_OK(SpoolPrompt(RecentTestPrompt("spooled", kT0 + 5000, "/w/a"), path_).status());
  ASSERT_OK_AND_ASSIGN(SpoolImportReport r, ImportSpool(path_));
  EXPECT_EQ(r.imported, 1u);
  EXPECT_TRUE(r.recent_refreshed);
  auto fast = RecentPromptsFromFile(path_, "/w/a", 2);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(RecentTexts(*fast), (std::vector<std::string>{"spooled", "before"}));
}

}  // namespace
}  // namespace msp
