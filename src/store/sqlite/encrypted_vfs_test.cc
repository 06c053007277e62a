// Tests of the encrypting VFS's WAL handling (encrypted_vfs.h), without
// kill timing: the files a kill -9 leaves are made by copying an open
// store's database and WAL and appending the torn frame a killed writer
// can leave (its header written, its page write cut short, so the page
// fails its tag). SQLite's recovery reads that frame and must take it for
// the end of the log; every committed row stays. A committed frame damaged
// under a running store is still corruption.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "msp/status.h"
#include "store/store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

constexpr char kKey[] = "2b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfe";
constexpr int kPageSize = 4096;  // SQLite's default, which the store keeps
constexpr int kWalHeader = 32;
constexpr int kFrameHeader = 24;
constexpr int kFrame = kFrameHeader + kPageSize;

StoreOptions Options(const std::string& dir) {
  StoreOptions options;
  options.data_dir = dir;
  options.encryption_key = kKey;
  return options;
}

WriteBatch Batch(int n, std::vector<std::string>* ids) {
  WriteBatch batch;
  for (int i = 0; i < 5; ++i) {
    Memory m;
    m.id = "b" + std::to_string(n) + "-" + std::to_string(i);
    m.ns.tenant = "t";
    m.text = std::string(300, static_cast<char>('a' + i));
    batch.puts.push_back(m);
    ids->push_back(m.id);
  }
  return batch;
}

std::string Bytes(const std::string& path) { return testing::ReadWholeFile(path); }

void Put(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Status of reading every id back, and how many came back.
Result<size_t> CountPresent(Store& store, const std::vector<std::string>& ids) {
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> found, store.GetMany(ids, /*with_embeddings=*/false));
  std::set<std::string> present;
  for (const Memory& m : found) present.insert(m.id);
  size_t n = 0;
  for (const std::string& id : ids) n += present.count(id);
  return n;
}

TEST(EncryptedVfsTest, TornFrameAfterTheLastCommitEndsTheLogAndEveryCommittedRowStays) {
  testing::TempDir live("msp-vfs-live");
  testing::TempDir crashed("msp-vfs-crashed");
  std::vector<std::string> ids;
  std::string db;
  std::string wal;
  {
    auto store = OpenStore(Options(live.path()));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int n = 0; n < 3; ++n) ASSERT_TRUE((*store)->Apply(Batch(n, &ids)).ok());
    // What a kill -9 now would leave (the shared memory aside, which a
    // new first opener rebuilds from the WAL).
    db = Bytes(live.path() + "/msp.db");
    wal = Bytes(live.path() + "/msp.db-wal");
  }
  ASSERT_GE(wal.size(), static_cast<size_t>(kWalHeader + kFrame));
  ASSERT_EQ((wal.size() - kWalHeader) % kFrame, 0u);

  // The torn frame: a header like the last commit's (this WAL's salts, a
  // real page number), then a page whose first part is new bytes and whose
  // rest is what the file held before, so its tag cannot match.
  std::string frame = wal.substr(wal.size() - kFrame);
  for (int i = kFrameHeader; i < kFrameHeader + kPageSize / 2; ++i) frame[i] = static_cast<char>(frame[i] ^ 0xa5);
  Put(crashed.path() + "/msp.db", db);
  Put(crashed.path() + "/msp.db-wal", wal + frame);

  {
    auto store = OpenStore(Options(crashed.path()));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<size_t> present = CountPresent(**store, ids);
    ASSERT_TRUE(present.ok()) << present.status().ToString();
    EXPECT_EQ(*present, ids.size());
    // Still writable: the next commit goes where the torn frame was.
    ASSERT_TRUE((*store)->Apply(Batch(3, &ids)).ok());
  }
  auto reopened = OpenStore(Options(crashed.path()));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Result<size_t> present = CountPresent(**reopened, ids);
  ASSERT_TRUE(present.ok()) << present.status().ToString();
  EXPECT_EQ(*present, ids.size());
}

TEST(EncryptedVfsTest, CommittedFrameDamagedUnderARunningStoreIsCorruption) {
  testing::TempDir dir("msp-vfs-damaged");
  std::vector<std::string> ids;
  auto writer = OpenStore(Options(dir.path()));
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Apply(Batch(0, &ids)).ok());
  // Flip a byte in the middle of every committed frame's page. The open
  // writer keeps the log valid in shared memory, so a second handle with a
  // cold cache reads these frames as pages (no recovery): each fails its
  // tag, and that must be an error, never a silently older store.
  const std::string path = dir.path() + "/msp.db-wal";
  std::string wal = Bytes(path);
  ASSERT_GE(wal.size(), static_cast<size_t>(kWalHeader + kFrame));
  for (size_t at = kWalHeader + kFrameHeader + kPageSize / 2; at < wal.size(); at += kFrame) {
    wal[at] = static_cast<char>(wal[at] ^ 0x5a);
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);  // in place, no truncation
    f.write(wal.data(), static_cast<std::streamsize>(wal.size()));
    ASSERT_TRUE(f.good());
  }
  auto reader = OpenStore(Options(dir.path()));
  Status s = reader.ok() ? CountPresent(**reader, ids).status() : reader.status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
}

}  // namespace
}  // namespace msp
