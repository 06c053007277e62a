// Tests for the small utilities: time, text, ids, hashes, UTF-8, data files,
// names and namespaces.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "msp/status.h"
#include "msp/types.h"
#include "tests/support/test_util.h"
#include "util/data_file.h"
#include "util/hash.h"
#include "util/huge_heap.h"
#include "util/module.h"
#include "util/passages.h"
#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"
#include "util/uuid.h"
#include "util/web_origin.h"

namespace msp {
namespace {

using testing::Contains;
using testing::TempDir;

TEST(TimeTest, FormatsAndParsesRoundTrip) {
  const TimeMs t = 1764496800123;  // 2025-11-30T10:00:00.123Z
  EXPECT_EQ(FormatIso8601(t), "2025-11-30T10:00:00.123Z");
  auto back = ParseIso8601(FormatIso8601(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(FormatIso8601(0), "1970-01-01T00:00:00.000Z");
}

TEST(TimeTest, FormatsEveryYearAsPrintfWould) {
  // The four-digit years digit by digit, the others through printf; both
  // against gmtime's fields. Round trips where ParseIso8601 reads the form.
  EXPECT_EQ(FormatIso8601(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(253402300800000), "10000-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIso8601(-62167219200000), "0000-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIso8601(-62167219200001), "-001-12-31T23:59:59.999Z");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5000; ++i) {
    const TimeMs t = static_cast<TimeMs>(rng() % 253402300800000ULL) - (i % 2 == 0 ? 0 : 62167219200000LL);
    const time_t secs = static_cast<time_t>(t >= 0 ? t / 1000 : (t - 999) / 1000);
    std::tm tm{};
    ASSERT_NE(gmtime_r(&secs, &tm), nullptr);
    char want[64];
    std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(((t % 1000) + 1000) % 1000));
    ASSERT_EQ(FormatIso8601(t), want) << t;
    auto back = ParseIso8601(want);
    ASSERT_TRUE(back.ok()) << want;
    ASSERT_EQ(*back, t) << want;
  }
}

TEST(TimeTest, ParsesDatesAndZones) {
  EXPECT_EQ(*ParseIso8601("1970-01-02"), kMsPerDay);
  EXPECT_EQ(*ParseIso8601("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(*ParseIso8601("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(*ParseIso8601("2024-02-29"), *ParseIso8601("2024-03-01") - kMsPerDay);
}

TEST(TimeTest, RejectsMalformedTimes) {
  for (const char* s : {"", "2024", "2024-13-01", "2023-02-29", "2024-01-01T25:00", "2024-01-01X",
                        "2024-01-01T10:00Zjunk", "yesterday"}) {
    auto r = ParseIso8601(s);
    EXPECT_FALSE(r.ok()) << s;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(UuidTest, IsVersion7AndUnique) {
  std::string a = NewUuid(1000), b = NewUuid(1000);
  EXPECT_TRUE(IsUuid(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '7');
  EXPECT_LT(NewUuid(1000), NewUuid(2000));  // time-ordered
  EXPECT_FALSE(IsUuid("not-a-uuid"));
}

// Processes forked after the generator was first used draw their own
// numbers: ids made in the same millisecond by parent and children differ.
TEST(UuidTest, ForkedProcessesMakeDifferentIds) {
  const std::string before = NewUuid(5000);  // the generator is in use before the fork
  std::set<std::string> ids{before, NewUuid(5000)};
  constexpr int kChildren = 4;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<pid_t> pids;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string id = NewUuid(5000);
      _exit(write(fds[1], id.data(), id.size()) == static_cast<ssize_t>(id.size()) ? 0 : 1);
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  char buf[36];
  for (int c = 0; c < kChildren; ++c) {
    ASSERT_EQ(read(fds[0], buf, sizeof buf), static_cast<ssize_t>(sizeof buf));
    EXPECT_TRUE(ids.insert(std::string(buf, sizeof buf)).second) << std::string(buf, sizeof buf);
  }
  close(fds[0]);
  EXPECT_EQ(ids.size(), 2u + kChildren);
}

TEST(UuidTest, NameUuidIsStableVersion8PerKey) {
  const std::string key = std::string("msp-core-block\x1f") + "acme\x1f" + "ann\x1f" + "helper\x1f" + "persona";
  const std::string id = NameUuid(key);
  EXPECT_TRUE(IsUuid(id));
  EXPECT_EQ(id[14], '8');
  EXPECT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b');
  EXPECT_EQ(NameUuid(key), id);
  EXPECT_NE(NameUuid(key + "x"), id);
  // These ids are stored (core-memory blocks, procedure versions, turn
  // journals): the values from before the function moved to util/ must stay.
  EXPECT_EQ(id, "44ae9e00-8cbc-80b2-aedf-79da21510505");
  EXPECT_EQ(NameUuid(""), "cbf29ce4-8422-8325-8fd0-bfc14fd0bfc1");
}

TEST(UuidTest, Hash128UuidIsStable) {
  // The mission records' ids (mission/records.cc) are HashUuid(Hash128(key)):
  // the values from before the hash moved to util/ must stay.
  const std::string key =
      std::string("msp-mission\x1f") + "acme\x1f" + "apollo\x1f" + "principle\x1f" + "P-7\x1f" + "1";
  const auto [hi, lo] = Hash128(key);
  EXPECT_EQ(HashUuid(hi, lo), "3a514c03-f331-8087-bbe6-a8505d641de0");
  EXPECT_NE(Hash128(key), Hash128(key + "x"));
}

TEST(Utf8Test, PrefixesNeverEndInsideACharacter) {
  const std::string s = "жук🙂b";  // 2 + 2 + 2 + 4 + 1 bytes
  EXPECT_EQ(Utf8Chars(s), 5u);
  EXPECT_EQ(Utf8PrefixChars(s, 0), "");
  EXPECT_EQ(Utf8PrefixChars(s, 1), "ж");
  EXPECT_EQ(Utf8PrefixChars(s, 3), "жук");
  EXPECT_EQ(Utf8PrefixChars(s, 4), "жук🙂");
  EXPECT_EQ(Utf8PrefixChars(s, 10), s);
  EXPECT_EQ(Utf8PrefixBytes(s, 0), "");
  EXPECT_EQ(Utf8PrefixBytes(s, 1), "");
  EXPECT_EQ(Utf8PrefixBytes(s, 3), "ж");
  EXPECT_EQ(Utf8PrefixBytes(s, 9), "жук");
  EXPECT_EQ(Utf8PrefixBytes(s, 10), "жук🙂");
  EXPECT_EQ(Utf8PrefixBytes(s, 11), s);
  EXPECT_EQ(Utf8PrefixBytes(s, 100), s);
}

TEST(Utf8Test, CapCutsBetweenCharactersAndSaysHowManyAreLeft) {
  EXPECT_EQ(CapUtf8Chars("short", 10), "short");
  EXPECT_EQ(CapUtf8Chars("short", 5), "short");
  EXPECT_EQ(CapUtf8Chars("ééééé", 3), "ééé… [2 more characters]");
  EXPECT_EQ(CapUtf8Chars("a😀b", 1), "a… [2 more characters]");
}

TEST(Utf8Test, AcceptsValidAndRejectsInvalid) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("Привіт, світ — ✓ 😀"));
  size_t at = 0;
  EXPECT_FALSE(IsValidUtf8(std::string("ab\xff", 3), &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
}

TEST(Utf8Test, EscapesOnlyTheBytesThatAreNotUtf8) {
  EXPECT_EQ(EscapeInvalidUtf8("plain é ✓"), "plain é ✓");
  EXPECT_EQ(EscapeInvalidUtf8("last read: '\xe6'"), "last read: '\\xE6'");
  EXPECT_EQ(EscapeInvalidUtf8("\xe2\x82é\xff"), "\\xE2\\x82é\\xFF");
  EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8("\xc0\xaf\xed\xa0\x80")));
}

TEST(TextTest, FoldsAsciiCaseAndTrimsAsciiSpace) {
  EXPECT_EQ(AsciiLower("MiXeD 42 \xC3\x84"), "mixed 42 \xC3\x84");  // UTF-8 bytes unchanged
  EXPECT_EQ(TrimAsciiSpace(" \t\r\n\v\fa b\n "), "a b");
  EXPECT_EQ(TrimAsciiSpace("   "), "");
  EXPECT_TRUE(IsAsciiSpace('\v'));
  EXPECT_FALSE(IsAsciiSpace('\xA0'));
}

TEST(TimeTest, WallClockIsTheSystemClockInMs) {
  const auto ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t before = ms();
  const TimeMs t = WallClockMs();
  const int64_t after = ms();
  EXPECT_LE(before, t);
  EXPECT_LE(t, after);
}

TEST(TypesTest, NamesRoundTrip) {
  EXPECT_EQ(AllKinds().size(), 11u);
  for (Kind k : AllKinds()) {
    EXPECT_EQ(ParseKind(KindName(k)), k);
    EXPECT_NE(KindName(k), "unknown");
  }
  EXPECT_EQ(DefaultLayer(Kind::kEntity), Layer::kSemantic);
  EXPECT_EQ(DefaultLayer(Kind::kEvent), Layer::kWorkflow);
  EXPECT_EQ(DefaultLayer(Kind::kPrinciple), Layer::kWorkflow);
  EXPECT_FALSE(ParseKind("Fact").has_value());
  EXPECT_EQ(DefaultLayer(Kind::kEpisode), Layer::kEpisodic);
  EXPECT_EQ(DefaultLayer(Kind::kCorrection), Layer::kPractitioner);
}

TEST(NamespaceTest, ScopeContainsRecordsByNonEmptyParts) {
  Namespace scope;
  scope.tenant = "acme";
  scope.user = "ann";
  Namespace rec = scope;
  rec.session = "s1";
  EXPECT_TRUE(scope.Contains(rec));
  rec.user = "bob";
  EXPECT_FALSE(scope.Contains(rec));
  Namespace other_tenant = scope;
  other_tenant.tenant = "globex";
  EXPECT_FALSE(scope.Contains(other_tenant));
  Namespace tenant_only;
  tenant_only.tenant = "acme";
  EXPECT_TRUE(tenant_only.Contains(rec));
  EXPECT_EQ(rec.ToString(), "tenant=acme/user=bob/session=s1");
}

TEST(StatusTest, ResultCarriesValueOrError) {
  Result<int> good = 3;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = Status::NotFound("no record abc");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(), "not_found: no record abc");
  EXPECT_EQ(bad.status().WithContext("get").message(), "get: no record abc");
}

TEST(HashTest, Fnv1aMatchesTheReferenceValues) {
  EXPECT_EQ(Fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv1a32("foobar"), 0xbf9cf968u);
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(Fnv1a64("bar", Fnv1a64("foo")), Fnv1a64("foobar"));
}

TEST(DataFileTest, ConfiguredPathThenFirstExistingCandidate) {
  TempDir dir("data-file");
  ASSERT_TRUE(dir.ok());
  const std::string a = dir.path() + "/a.bin", b = dir.path() + "/b.bin", c = dir.path() + "/c.bin";
  std::ofstream(b) << "b";
  std::ofstream(c) << "c";
  const DataFileSpec spec{.setting = "x.path", .what = "x table", .expected = "a table", .how_to_install = "run it"};

  Result<std::string> configured = FindDataFile(c, {a, b}, spec);
  ASSERT_TRUE(configured.ok()) << configured.status().ToString();
  EXPECT_EQ(*configured, c);

  Result<std::string> missing = FindDataFile(a, {b, c}, spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status().message(), "x.path " + a + " does not exist (it should be a table)"))
      << missing.status().message();

  Result<std::string> first = FindDataFile("", {a, b, c}, spec);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, b);

  Result<std::string> none = FindDataFile("", {a, dir.path()}, spec);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no x table found (looked at " + a + ", " + dir.path() + "); run it");
}

TEST(OriginCheck, LoopbackAndAllowListOnly) {
  const std::vector<std::string> allowed = {"https://app.example.com/"};
  for (const char* ok : {"http://localhost", "http://localhost:3000", "https://127.0.0.1:8443", "http://127.1.2.3",
                         "http://[::1]:6274", "HTTP://LOCALHOST:1", "https://app.example.com", "https://APP.example.com/"}) {
    EXPECT_TRUE(OriginAllowed(ok, allowed)) << ok;
  }
  for (const char* bad : {"https://evil.example", "null", "http://localhost.evil.example", "http://127.0.0.1.evil",
                          "http://127.0.0.256", "file://localhost", "http://localhost:abc", "http://[::2]",
                          "http://evil@localhost", "https://app.example.com:444", ""}) {
    EXPECT_FALSE(OriginAllowed(bad, allowed)) << bad;
  }
}


TEST(HostCheck, BindAddressLoopbackNamesAndAllowList) {
  const std::vector<std::string> none;
  const std::vector<std::string> named = {"memory.example.com"};
  for (const char* ok : {"127.0.0.1", "127.0.0.1:8420", "localhost:8420", "LOCALHOST", "[::1]:8420", "127.9.9.9"}) {
    EXPECT_TRUE(HostAllowed(ok, "127.0.0.1", none)) << ok;
  }
  for (const char* bad : {"evil.example", "evil.example:8420", "localhost.evil.example", "127.0.0.1.evil",
                          "10.0.0.5", "", "a b", "evil@127.0.0.1", "[::1", "localhost:x"}) {
    EXPECT_FALSE(HostAllowed(bad, "127.0.0.1", none)) << bad;
  }
  EXPECT_TRUE(HostAllowed("memory.example.com:443", "127.0.0.1", named));
  EXPECT_TRUE(HostAllowed("[::1]", "::1", none));
  // A wildcard bind: localhost and IP literals (never a rebinding page's host).
  EXPECT_TRUE(HostAllowed("10.0.0.5:8420", "0.0.0.0", none));
  EXPECT_TRUE(HostAllowed("[fe80::1]:8420", "::", none));
  EXPECT_FALSE(HostAllowed("evil.example", "0.0.0.0", none));
  EXPECT_TRUE(HostAllowed("memory.example.com", "0.0.0.0", named));
  // A specific address: that address.
  EXPECT_TRUE(HostAllowed("10.0.0.5:8420", "10.0.0.5", none));
  EXPECT_FALSE(HostAllowed("10.0.0.6", "10.0.0.5", none));
  EXPECT_FALSE(HostAllowed("localhost", "10.0.0.5", none));
}

// Passages cover the text in order, each within the size, cut at sentence
// ends when one lies in the second half, never inside a character.
TEST(PassagesTest, CoverTheTextAtSentenceAndCharacterBoundaries) {
  EXPECT_TRUE(SplitPassages("short text", 64).empty());
  const std::string text = "One sentence here. Another one follows, longer than the first! Then a third?\nend";
  const auto spans = SplitPassages(text, 30);
  ASSERT_GE(spans.size(), 2u);
  size_t at = 0;
  for (const TextSpan& s : spans) {
    EXPECT_EQ(s.begin, at);
    EXPECT_GT(s.end, s.begin);
    EXPECT_LE(s.end - s.begin, 30u);
    at = s.end;
  }
  EXPECT_EQ(at, text.size());
  EXPECT_EQ(text.substr(0, spans[0].end), "One sentence here. ");
  // A word longer than the piece: cut at a character boundary (U+00E9 is 2 bytes).
  std::string long_word;
  for (int i = 0; i < 30; ++i) long_word += "\xc3\xa9";
  for (const TextSpan& s : SplitPassages(long_word, 7)) {
    EXPECT_TRUE(IsValidUtf8(std::string_view(long_word).substr(s.begin, s.end - s.begin)));
  }
  EXPECT_EQ(Utf8Prefix(long_word, 7), 6u);
  EXPECT_EQ(Utf8Prefix("abc", 7), 3u);
}

}  // namespace
// A program linked to libmsp.so finds msp's modules installed beside the
// library (docs/library.md), not only beside itself.
TEST(ModuleTest, LooksBesideTheLibraryHoldingTheLoader) {
  ModuleSpec spec{"libmsp_absent.so", "MSP_ABSENT_TEST_MODULE", "", "msp_absent_v1", "a test"};
  const std::vector<std::string> candidates = ModuleCandidates(spec);
  const std::string program = ProgramDirectory();
  ASSERT_FALSE(program.empty());
  ASSERT_GE(candidates.size(), 2u);
  EXPECT_EQ(candidates[0], program + "/libmsp_absent.so");
  EXPECT_EQ(candidates[1], program + "/../lib/msp/libmsp_absent.so");
  const std::string lib = LibraryDirectory();
#ifdef MSP_TEST_SHARED_LIBS
  // The loader is in libmsp_util.so.
  ASSERT_FALSE(lib.empty());
  EXPECT_TRUE(std::filesystem::exists(lib + "/libmsp_util.so")) << lib;
  for (const std::string& path : {lib + "/msp/libmsp_absent.so", lib + "/libmsp_absent.so"}) {
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), path), candidates.end()) << path;
  }
  // Each place once.
  EXPECT_EQ(std::set<std::string>(candidates.begin(), candidates.end()).size(), candidates.size());
#else
  // Linked into the program: nothing more to look at.
  EXPECT_EQ(lib, "");
  EXPECT_EQ(candidates.size(), 2u);
#endif
  Result<void*> loaded = LoadModule(spec);
  ASSERT_FALSE(loaded.ok());
  for (const std::string& path : candidates) {
    EXPECT_NE(loaded.status().message().find(path + " (not there)"), std::string::npos) << path;
  }
}

}  // namespace msp

namespace msp {
namespace {

TEST(FilesAtRestTest, PrivateDirectoriesFilesAndExposedSecrets) {
  testing::TempDir dir("private");
  ASSERT_TRUE(dir.ok());
  namespace fs = std::filesystem;
  auto mode = [](const std::string& p) { return static_cast<unsigned>(fs::status(p).permissions()) & 0777u; };
  // Only the directories it creates are made private.
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  std::error_code ec;
  CreatePrivateDirectories(dir.path() + "/a/b", ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(mode(dir.path()), 0755u);
  EXPECT_EQ(mode(dir.path() + "/a"), 0700u);
  EXPECT_EQ(mode(dir.path() + "/a/b"), 0700u);
  const std::string file = dir.path() + "/a/b/f";
  PrecreatePrivateFile(file);
  EXPECT_EQ(mode(file), 0600u);
  EXPECT_EQ(fs::file_size(file), 0u);
  EXPECT_EQ(SecretsFileExposure(file, "server.api_keys_file"), "");
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  PrecreatePrivateFile(file);  // an existing file is left alone
  EXPECT_EQ(mode(file), 0640u);
  const std::string warning = SecretsFileExposure(file, "server.api_keys_file");
  EXPECT_NE(warning.find("server.api_keys_file '" + file + "'"), std::string::npos) << warning;
  EXPECT_NE(warning.find("mode 0640"), std::string::npos) << warning;
  EXPECT_EQ(SecretsFileExposure(dir.path() + "/none", "x"), "");
}

// /proc/buddyinfo's free blocks of 2 MB and more, in 2 MB blocks: order 9
// counts 1, order 10 counts 2, over every zone and node.
TEST(HugeHeapTest, CountsTheFreeHugeBlocksOfEveryZone) {
  const std::string_view info =
      "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
      "Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753 \n"
      "Node 0, zone   Normal  14013  16531   9616   4376   2521   1580   1596    892    549    345    702 \n"
      "Node 1, zone   Normal      5      5      5      5      5      5      5      5      5      0      0 \n";
  EXPECT_EQ(FreeHugeBlocks(info), (1 + 2 * 3) + (1 + 2 * 753) + (345 + 2 * 702) + 0u);
  // A fragmented machine: nothing free at 2 MB.
  EXPECT_EQ(FreeHugeBlocks("Node 0, zone   Normal  900  800  700  600  500  400  300  200  100  0  0\n"), 0u);
  // A kernel with more orders (up to 4 MB blocks and beyond): 1 + 2 + 4.
  EXPECT_EQ(FreeHugeBlocks("Node 0, zone Normal 0 0 0 0 0 0 0 0 0 1 1 1\n"), 7u);
  // Nothing readable: no limit known.
  EXPECT_EQ(FreeHugeBlocks(""), std::numeric_limits<size_t>::max());
  EXPECT_EQ(FreeHugeBlocks("garbage\n"), std::numeric_limits<size_t>::max());
}

// The heap advised to huge pages: whole 2 MB blocks of the main heap, and
// blocks allocated afterwards come from them. Where it cannot apply (under
// AddressSanitizer, whose allocator is not glibc's), nothing is advised.
TEST(HugeHeapTest, AdvisesOnlyWholeBlocksOfTheHeapThatLaterBlocksUse) {
  const size_t advised = BackHeapWithHugePages(size_t{16} << 20);
  EXPECT_EQ(advised % (size_t{2} << 20), 0u);
  EXPECT_LE(advised, size_t{16} << 20);
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 1000; ++i) {
    blocks.emplace_back(new char[1000]);
    std::memset(blocks.back().get(), i & 0xff, 1000);
  }
  // The mappings the kernel marks advised ("hg" among their VmFlags).
  struct Range {
    uintptr_t from, to;
    std::string name;
  };
  std::vector<Range> hinted;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  Range current{};
  while (std::getline(smaps, line)) {
    unsigned long long a = 0, b = 0;
    char name[256] = "";
    if (std::sscanf(line.c_str(), "%llx-%llx %*s %*s %*s %*s %255s", &a, &b, name) >= 2 &&
        line.find(':') > line.find(' ')) {
      current = Range{static_cast<uintptr_t>(a), static_cast<uintptr_t>(b), name};
    } else if (line.rfind("VmFlags:", 0) == 0 && (line + " ").find(" hg ") != std::string::npos) {
      hinted.push_back(current);
    }
  }
  if (advised == 0) {
    EXPECT_TRUE(hinted.empty()) << hinted.front().name;
    return;
  }
  ASSERT_EQ(hinted.size(), 1u);
  EXPECT_EQ(hinted[0].name, "[heap]");
  EXPECT_EQ(hinted[0].to - hinted[0].from, advised);
  EXPECT_EQ(hinted[0].from % (uintptr_t{2} << 20), 0u);
  const auto first = reinterpret_cast<uintptr_t>(blocks.front().get());
  EXPECT_GE(first, hinted[0].from);
  EXPECT_LT(first, hinted[0].to);
}

}  // namespace
}  // namespace msp
