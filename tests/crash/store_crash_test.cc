// Crash test: nothing acknowledged is lost when a writer is killed (kill -9).
//
// Each round forks a child that opens the store and applies batches in a loop,
// sending a batch's ids to the parent over a pipe only after Apply returned ok.
// The parent SIGKILLs the child at a random moment. After all rounds on the
// same database: PRAGMA integrity_check must say "ok", every acknowledged id
// must be present, and the change sequence must account for every record.
// The same on an encrypted store (docs/encryption.md), whose pages and WAL
// frames go through the encrypting VFS.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/test_util.h"
#include "msp/status.h"
#include "store/sqlite/encrypted_vfs.h"
#include "store/store.h"

namespace msp {
namespace {

constexpr int kRounds = 30;
constexpr int kRecordsPerBatch = 5;
constexpr char kKey[] = "6d73702d63726173682d746573742d6b65792d30313233343536373839616263";

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// The child: writes batches until killed. Never returns.
[[noreturn]] void WriterLoop(const std::string& data_dir, const std::string& key, int round, int out_fd) {
  StoreOptions options;
  options.data_dir = data_dir;
  options.encryption_key = key;
  options.synchronous = "full";
  auto opened = OpenStore(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "writer: %s\n", opened.status().ToString().c_str());
    _exit(2);
  }
  std::unique_ptr<Store> store = std::move(opened).value();
  for (int batch_no = 0;; ++batch_no) {
    WriteBatch batch;
    std::string line;
    for (int i = 0; i < kRecordsPerBatch; ++i) {
      Memory m;
      m.id = "r" + std::to_string(round) + "-" + std::to_string(batch_no) + "-" + std::to_string(i);
      m.ns.tenant = "crash";
      m.ns.session = "round-" + std::to_string(round);
      m.kind = Kind::kEpisode;
      m.layer = Layer::kEpisodic;
      m.text = std::string(200 + 37 * i, 'a' + static_cast<char>(i));
      m.step_number = batch_no * kRecordsPerBatch + i;
      m.created_at = batch_no;
      m.embedding.assign(64, 0.25f * static_cast<float>(i));
      m.embedder_id = "test-64";
      batch.puts.push_back(m);
      line += m.id + (i + 1 < kRecordsPerBatch ? " " : "\n");
    }
    if (batch_no > 0) {
      // Replace one record of the previous batch as well, so pages are rewritten.
      Memory again = batch.puts[0];
      again.id = "r" + std::to_string(round) + "-" + std::to_string(batch_no - 1) + "-0";
      again.text = "replaced";
      again.step_number = (batch_no - 1) * kRecordsPerBatch;  // its own step: steps are unique
      batch.puts.push_back(again);
    }
    AuditEvent e;
    e.tenant = "crash";
    e.record_id = batch.puts[0].id;
    batch.audit.push_back(e);
    batch.meta.push_back({"last_batch", std::to_string(round) + "/" + std::to_string(batch_no)});
    if (!store->Apply(batch).ok()) _exit(3);
    // Acknowledged: only now does the parent learn of these ids.
    if (!WriteAll(out_fd, line)) _exit(4);
  }
}

// Reads what is available on `fd` into `buffer`, waiting at most `timeout_ms`.
// Returns false at end of file.
bool Drain(int fd, int timeout_ms, std::string* buffer) {
  pollfd p{fd, POLLIN, 0};
  const int ready = poll(&p, 1, timeout_ms);
  if (ready <= 0) return true;
  char chunk[4096];
  const ssize_t n = read(fd, chunk, sizeof(chunk));
  if (n == 0) return false;
  if (n > 0) buffer->append(chunk, static_cast<size_t>(n));
  return true;
}

// Moves the complete lines of `buffer` (space-separated ids) into `acked`.
void TakeCompleteLines(std::string* buffer, std::set<std::string>* acked) {
  size_t end;
  while ((end = buffer->find('\n')) != std::string::npos) {
    const std::string line = buffer->substr(0, end);
    buffer->erase(0, end + 1);
    size_t start = 0;
    while (start < line.size()) {
      size_t space = line.find(' ', start);
      if (space == std::string::npos) space = line.size();
      acked->insert(line.substr(start, space - start));
      start = space + 1;
    }
  }
}

std::string QueryText(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return std::string("prepare failed: ") + sqlite3_errmsg(db);
  }
  std::string out;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (!out.empty()) out += "\n";
    out += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
  }
  sqlite3_finalize(stmt);
  return out;
}

class StoreCrashTest : public ::testing::TestWithParam<bool> {};

TEST_P(StoreCrashTest, AcknowledgedBatchesSurviveSigkill) {
  const std::string key = GetParam() ? kKey : "";
  const std::string dir = ::msp::testing::MakeTestDir("msp-crash");
  ASSERT_FALSE(dir.empty());
  std::mt19937 rng(std::random_device{}());
  // The kill comes after a random number of acknowledged batches (0: possibly
  // during open and migration) plus a random delay, so it lands anywhere in a
  // batch without the test depending on how fast the machine is.
  std::uniform_int_distribution<int> acks_before_kill(0, 12);
  std::uniform_int_distribution<int> extra_delay_us(0, 3000);

  std::set<std::string> acked;
  int rounds_waiting_for_acks = 0;
  for (int round = 0; round < kRounds; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      WriterLoop(dir, key, round, fds[1]);
    }
    close(fds[1]);

    const int wanted = acks_before_kill(rng);
    if (wanted > 0) ++rounds_waiting_for_acks;
    std::string buffer;
    std::set<std::string> round_acked;
    bool open = true;
    // A safety net against a hung writer, not a performance bound.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (open && round_acked.size() < static_cast<size_t>(wanted * kRecordsPerBatch) &&
           std::chrono::steady_clock::now() < give_up) {
      open = Drain(fds[0], 10, &buffer);
      TakeCompleteLines(&buffer, &round_acked);
    }
    usleep(static_cast<useconds_t>(extra_delay_us(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    // The child only ever stops by our signal; any exit code is a failure inside it.
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited early with code " << WEXITSTATUS(status);
    while (open) open = Drain(fds[0], 100, &buffer);  // what was acknowledged before the kill
    TakeCompleteLines(&buffer, &round_acked);         // a partial last line is not an ack
    close(fds[0]);
    ASSERT_GE(round_acked.size(), static_cast<size_t>(wanted * kRecordsPerBatch))
        << "round " << round << ": the writer made no progress";
    acked.insert(round_acked.begin(), round_acked.end());
  }
  EXPECT_GT(acked.size(), 0u);

  // Integrity first, through a raw connection, before the store touches the file.
  {
    std::string vfs;
    if (!key.empty()) {
      StoreOptions key_options;
      key_options.encryption_key = key;
      auto loaded = LoadStoreKey(key_options);
      ASSERT_TRUE(loaded.ok() && loaded->has_value());
      auto name = EncryptedVfsName(**loaded);
      ASSERT_TRUE(name.ok()) << name.status().ToString();
      vfs = *name;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2((dir + "/msp.db").c_str(), &db, SQLITE_OPEN_READWRITE,
                              vfs.empty() ? nullptr : vfs.c_str()),
              SQLITE_OK);
    EXPECT_EQ(QueryText(db, "PRAGMA integrity_check"), "ok");
    // Every record's seq is a put change for that record.
    EXPECT_EQ(QueryText(db,
                        "SELECT count(*) FROM records r LEFT JOIN changes c ON c.seq = r.seq "
                        "AND c.record_id = r.id AND c.op = 'put' WHERE c.seq IS NULL"),
              "0");
    sqlite3_close(db);
  }

  StoreOptions options;
  options.data_dir = dir;
  options.encryption_key = key;
  auto opened = OpenStore(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<Store> store = std::move(opened).value();
  std::vector<std::string> ids(acked.begin(), acked.end());
  auto found = store->GetMany(ids, /*with_embeddings=*/true);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  std::set<std::string> present;
  for (const Memory& m : *found) {
    present.insert(m.id);
    EXPECT_EQ(m.embedding.size(), 64u) << m.id;
  }
  for (const std::string& id : acked) EXPECT_TRUE(present.count(id) == 1) << "lost " << id;

  // Every batch landed whole or not at all: each "r<round>-<batch>-" prefix
  // has all kRecordsPerBatch records or none.
  std::map<std::string, int> per_batch;
  int64_t stored = 0;
  ASSERT_TRUE(store
                  ->Scan([&](const Memory& m) {
                    ++stored;
                    per_batch[m.id.substr(0, m.id.rfind('-') + 1)]++;
                    return true;
                  })
                  .ok());
  for (const auto& [prefix, count] : per_batch) {
    EXPECT_EQ(count, kRecordsPerBatch) << "batch " << prefix << " landed partly";
  }
  std::cout << "crash test" << (key.empty() ? "" : " (encrypted)") << ": " << kRounds << " rounds, "
            << rounds_waiting_for_acks << " killed after acknowledged batches, " << acked.size() << " acknowledged ids, " << stored
            << " stored\n";

  // The store is still writable and its sequence continues.
  auto last = store->LastSeq();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  Memory after;
  after.id = "after-crashes";
  after.ns.tenant = "crash";
  WriteBatch last_batch;
  last_batch.puts.push_back(after);
  auto applied = store->Apply(last_batch);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_GT(applied->at(0), *last);

  store.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

INSTANTIATE_TEST_SUITE_P(PlainAndEncrypted, StoreCrashTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "Encrypted" : "Plain";
                         });

}  // namespace
}  // namespace msp
