// Encryption at rest (docs/encryption.md), through the store and the engine:
// no file of the data directory holds a written memory's text (the database,
// its WAL and shared memory, and no index files at all); what was written
// reads back after reopening; a wrong key, a missing key, a key for a plain
// store and a malformed key are clear errors that change no byte; a damaged
// page is reported as corruption.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "msp/memory.h"
#include "store/sqlite/encrypted_vfs.h"
#include "store/store.h"
#include "tests/support/test_util.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr char kKey[] = "4f1c2a9b7e3d5c6a8b9e0f1d2c3b4a5968776655443322110ffeeddccbbaa998";
constexpr char kOtherKey[] = "0000000000000000000000000000000000000000000000000000000000000001";
// What is written, and must never be found in the clear.
constexpr char kSecret[] = "the vault combination is kumquat-7741-zeppelin";
constexpr char kSecretWord[] = "kumquat";

// Every regular file under `dir`, path -> bytes.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out[e.path().string()] = s.str();
  }
  return out;
}

// The files under `dir` holding `needle`, comma-separated ("" when none).
std::string FilesHolding(const std::string& dir, const std::string& needle) {
  std::string found;
  for (const auto& [path, bytes] : Files(dir)) {
    if (bytes.find(needle) != std::string::npos) found += path + ",";
  }
  return found;
}

class EncryptionTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestDir("msp-encryption"); }
  void TearDown() override { testing::RemoveTestDir(dir_); }

  Options Opts(const std::string& key = kKey) const {
    Options o;
    o.store.data_dir = dir_;
    o.store.encryption_key = key;
    return o;
  }
  StoreOptions StoreOpts(const std::string& key = kKey) const { return Opts(key).store; }

  static WriteRequest Req(const std::string& text) {
    WriteRequest r;
    r.ns.tenant = "t";
    r.ns.user = "u";
    r.kind = Kind::kArtifact;
    r.text = text;
    r.tags = {"profile"};
    return r;
  }
  static RetrieveRequest Query(const std::string& text) {
    RetrieveRequest q;
    q.scope.tenant = "t";
    q.scope.user = std::string("u");
    q.query = text;
    return q;
  }

  // Writes kSecret through the engine and closes it; returns its id.
  std::string WriteSecret() {
    auto mem = MemoryLayer::Open(Opts());
    EXPECT_TRUE(mem.ok()) << mem.status().ToString();
    if (!mem.ok()) return "";
    auto w = (*mem)->Write(Req(kSecret));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? w->id : "";
  }

  std::string dir_;
};

TEST_F(EncryptionTest, NoFileHoldsTheTextWhileOpenOrAfterClose) {
  auto mem = MemoryLayer::Open(Opts());
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*mem)->Write(Req(std::string(kSecret) + " number " + std::to_string(i))).ok());
  auto hits = (*mem)->Retrieve(Query(kSecretWord));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  EXPECT_FALSE(hits->empty());
  // While open: the WAL holds the writes.
  ASSERT_TRUE(fs::exists(dir_ + "/msp.db-wal"));
  EXPECT_EQ(FilesHolding(dir_, kSecretWord), "");
  mem->reset();
  EXPECT_EQ(FilesHolding(dir_, kSecretWord), "");
  // The derived indexes were never written to disk.
  EXPECT_FALSE(fs::exists(dir_ + "/lexical"));
  EXPECT_FALSE(fs::exists(dir_ + "/vector/index.msv"));
  // SQLite alone does not take it for a database.
  const std::string head = Files(dir_)[dir_ + "/msp.db"].substr(0, 16);
  EXPECT_EQ(head, std::string(kEncryptedMagic, 16));
}

TEST_F(EncryptionTest, WhatWasWrittenReadsBackAfterReopenAndIsFoundAgain) {
  const std::string id = WriteSecret();
  ASSERT_FALSE(id.empty());
  auto mem = MemoryLayer::Open(Opts());
  ASSERT_TRUE(mem.ok()) << mem.status().ToString();
  Namespace scope;
  scope.tenant = "t";
  scope.user = std::string("u");
  auto got = (*mem)->Get(scope, id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->text, kSecret);
  // The indexes were rebuilt in memory from the store at open.
  auto hits = (*mem)->Retrieve(Query("vault combination"));
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_FALSE(hits->empty());
  EXPECT_EQ((*hits)[0].memory.id, id);
}

TEST_F(EncryptionTest, WrongKeyIsAClearErrorAndChangesNothing) {
  ASSERT_FALSE(WriteSecret().empty());
  const auto before = Files(dir_);
  auto mem = MemoryLayer::Open(Opts(kOtherKey));
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("does not open the store"), std::string::npos) << mem.status().ToString();
  EXPECT_EQ(mem.status().message().find(kOtherKey), std::string::npos);
  EXPECT_EQ(Files(dir_), before);
}

TEST_F(EncryptionTest, MissingKeyIsAClearErrorAndChangesNothing) {
  ASSERT_FALSE(WriteSecret().empty());
  const auto before = Files(dir_);
  auto mem = MemoryLayer::Open(Opts(""));
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("is encrypted and no key is given"), std::string::npos)
      << mem.status().ToString();
  EXPECT_NE(mem.status().message().find("MSP_ENCRYPTION_KEY"), std::string::npos);
  EXPECT_EQ(Files(dir_), before);
}

TEST_F(EncryptionTest, KeyForAPlainStoreIsAClearErrorAndChangesNothing) {
  {
    auto mem = MemoryLayer::Open(Opts(""));
    ASSERT_TRUE(mem.ok()) << mem.status().ToString();
    ASSERT_TRUE((*mem)->Write(Req(kSecret)).ok());
  }
  const auto before = Files(dir_);
  auto mem = MemoryLayer::Open(Opts());
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("is not encrypted"), std::string::npos) << mem.status().ToString();
  EXPECT_EQ(Files(dir_), before);
}

TEST_F(EncryptionTest, MalformedKeyIsRefusedWithoutShowingIt) {
  const std::string bad = std::string(kKey).substr(0, 63) + "z";
  auto store = OpenStore(StoreOpts(bad));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(store.status().message().find("64 hexadecimal digits"), std::string::npos) << store.status().ToString();
  EXPECT_EQ(store.status().message().find(bad.substr(0, 20)), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ + "/msp.db"));
}

TEST_F(EncryptionTest, KeyFileMustBePrivate) {
  const std::string key_file = dir_ + "/../" + fs::path(dir_).filename().string() + ".key";
  {
    std::ofstream(key_file) << kKey << "\n";
  }
  StoreOptions o;
  o.data_dir = dir_;
  o.encryption_key_file = key_file;
  ::chmod(key_file.c_str(), 0644);
  auto open = OpenStore(o);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos) << open.status().ToString();
  ::chmod(key_file.c_str(), 0600);
  auto store = OpenStore(o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  store->reset();
  // The file and the same key from the environment open the same store.
  EXPECT_TRUE(OpenStore(StoreOpts()).ok());
  fs::remove(key_file);
}

TEST_F(EncryptionTest, DamagedPageIsCorruption) {
  const std::string id = WriteSecret();
  ASSERT_FALSE(id.empty());
  // After close the WAL is checkpointed into msp.db: flip a byte in the
  // middle of every page but the first (4096 bytes, SQLite's default).
  const std::string db = dir_ + "/msp.db";
  const auto size = fs::file_size(db);
  ASSERT_GT(size, 8192u);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    for (std::streamoff at = 4096 + 2048; at < static_cast<std::streamoff>(size); at += 4096) {
      char c = 0;
      f.seekg(at);
      f.read(&c, 1);
      c = static_cast<char>(c ^ 0x5a);
      f.seekp(at);
      f.write(&c, 1);
    }
  }
  // Every page is read by a full scan.
  auto store = OpenStore(StoreOpts());
  Status s = store.ok() ? (*store)->Scan([](const Memory&) { return true; }) : store.status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("failed its check"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace msp
