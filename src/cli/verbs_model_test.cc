// `msp model pull|list|remove` through RunCli against a local HTTP server
// (cpp-httplib on a real socket) serving the tiny BERT of
// tests/data/native_bert: a pull, a dropped connection resumed with a Range
// request, checksums, a 404, list, remove, and embedder.model by name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>
#include <httplib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/cli_test_util.h"
#include "model/model_store.h"
#include "tests/support/child_process.h"
#include "tests/support/test_util.h"

#ifndef MSP_SOURCE_DIR
#define MSP_SOURCE_DIR "."
#endif

namespace msp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kModelDir = std::string(MSP_SOURCE_DIR) + "/tests/data/native_bert";
const std::vector<std::string> kServedFiles = {"model.safetensors", "config.json", "vocab.txt", "tokenizer.json",
                                               "tokenizer_config.json", "1_Pooling/config.json"};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Serves kModelDir under /tiny/ (cpp-httplib answers Range requests with
// 206). model.safetensors' first `drops` requests are cut after `drop_at`
// bytes of the file: the connection closes in the middle of the body.
class ModelServer {
 public:
  ModelServer() {
    server_.Get(R"(/tiny/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string rel = req.matches[1];
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(rel + " range=" + req.get_header_value("Range"));
      }
      const std::string path = kModelDir + "/" + rel;
      if (rel.find("..") != std::string::npos || !fs::is_regular_file(path)) {
        res.status = 404;
        res.set_content("Entry not found", "text/plain");
        return;
      }
      auto body = std::make_shared<std::string>(ReadAll(path));
      size_t drop = 0;
      if (rel == "model.safetensors" && drops_ > 0) {
        --drops_;
        drop = drop_at_;
      }
      res.set_content_provider(body->size(), "application/octet-stream",
                               [body, drop](size_t offset, size_t length, httplib::DataSink& sink) {
                                 size_t n = std::min<size_t>(length, 4096);
                                 if (drop > 0) {
                                   if (offset >= drop) return false;  // the connection closes
                                   n = std::min(n, drop - offset);
                                 }
                                 sink.write(body->data() + offset, n);
                                 return true;
                               });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ModelServer() {
    server_.stop();
    thread_.join();
  }

  std::string Url(const std::string& path = "/tiny") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  void DropNext(int times, size_t at) {
    drops_ = times;
    drop_at_ = at;
  }
  std::vector<std::string> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> drops_{0};
  std::atomic<size_t> drop_at_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
};

class ModelVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    data_ = dir_.path() + "/data";
    fs::create_directories(data_);
  }

  CliRun Run(std::vector<std::string> args) {
    args.push_back("--data-dir");
    args.push_back(data_);
    return RunCliCapture(args);
  }

  std::string ModelPath(const std::string& name) const { return data_ + "/models/" + name; }

  void ExpectSameFiles(const std::string& name) {
    for (const std::string& f : kServedFiles) {
      EXPECT_EQ(ReadAll(ModelPath(name) + "/" + f), ReadAll(kModelDir + "/" + f)) << f;
    }
  }

  testing::TempDir dir_{"model-verb"};
  std::string data_;
  ModelServer server_;
};

TEST_F(ModelVerbTest, PullByUrlDownloadsTheFilesWritesTheManifestAndOpens) {
  CliRun r = Run({"model", "pull", server_.Url(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["name"], "tiny");
  EXPECT_EQ(out["dir"], ModelPath("tiny"));
  EXPECT_EQ(out["embedder_id"].get<std::string>().rfind("native:tiny:", 0), 0u) << out.dump();
  ExpectSameFiles("tiny");
  // No sentence_bert_config.json on the server: optional, skipped.
  EXPECT_FALSE(fs::exists(ModelPath("tiny") + "/sentence_bert_config.json"));
  EXPECT_FALSE(fs::exists(data_ + "/models/.tiny.partial"));
  json manifest = json::parse(ReadAll(ModelPath("tiny") + "/model.json"));
  EXPECT_EQ(manifest["source"], server_.Url());
  ASSERT_EQ(manifest["files"].size(), kServedFiles.size());
  for (const json& f : manifest["files"]) {
    const std::string source = kModelDir + "/" + f["path"].get<std::string>();
    EXPECT_EQ(f["bytes"].get<int64_t>(), static_cast<int64_t>(fs::file_size(source)));
    Result<std::string> sha = Sha256OfFile(source);
    ASSERT_TRUE(sha.ok());
    EXPECT_EQ(f["sha256"], *sha);
    EXPECT_FALSE(f["verified"].get<bool>());  // no checksum was given
  }
  // No Range was needed.
  for (const std::string& req : server_.Requests()) EXPECT_NE(req.find("range="), std::string::npos) << req;
  for (const std::string& req : server_.Requests()) EXPECT_EQ(req.substr(req.find("range=")), "range=") << req;

  // A second pull of the same name is refused and changes nothing.
  CliRun again = Run({"model", "pull", server_.Url()});
  EXPECT_NE(again.code, 0);
  EXPECT_NE(again.err.find("already"), std::string::npos) << again.err;
  ExpectSameFiles("tiny");
}

TEST_F(ModelVerbTest, ADroppedConnectionLeavesAPartThatTheNextPullResumesWithARange) {
  const size_t size = fs::file_size(kModelDir + "/model.safetensors");
  const size_t half = size / 2;
  server_.DropNext(1, half);
  CliRun first = Run({"model", "pull", server_.Url(), "--retries", "0"});
  ASSERT_NE(first.code, 0) << first.out;
  EXPECT_NE(first.err.find("resume"), std::string::npos) << first.err;
  EXPECT_FALSE(fs::exists(ModelPath("tiny")));
  const std::string part = data_ + "/models/.tiny.partial/model.safetensors.part";
  ASSERT_TRUE(fs::exists(part));
  EXPECT_EQ(fs::file_size(part), half);

  CliRun second = Run({"model", "pull", server_.Url()});
  ASSERT_EQ(second.code, 0) << second.err;
  ExpectSameFiles("tiny");
  std::vector<std::string> reqs = server_.Requests();
  EXPECT_NE(std::find(reqs.begin(), reqs.end(), "model.safetensors range=bytes=" + std::to_string(half) + "-"),
            reqs.end())
      << ::testing::PrintToString(reqs);
}

TEST_F(ModelVerbTest, ADroppedConnectionIsResumedWithinOnePull) {
  const size_t size = fs::file_size(kModelDir + "/model.safetensors");
  server_.DropNext(2, size / 3);
  CliRun r = Run({"model", "pull", server_.Url(), "--name", "resumed"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectSameFiles("resumed");
  std::vector<std::string> reqs = server_.Requests();
  // Dropped at a third twice (the second resumed from there), then the rest.
  EXPECT_EQ(std::count(reqs.begin(), reqs.end(), "model.safetensors range=bytes=" + std::to_string(size / 3) + "-"), 2)
      << ::testing::PrintToString(reqs);
}

// Python's http.server answers a Range request with the whole file (200): a
// part left by an earlier pull is then written again from the start, not
// appended to.
TEST_F(ModelVerbTest, AServerThatIgnoresTheRangeSendsTheFileAgain) {
  testing::ChildProcess server = testing::SpawnWithStderr(
      {"/usr/bin/python3", "-u", "-c",
       "import functools, http.server, sys\n"
       "h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])\n"
       "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), h)\n"
       "print('listening on http://127.0.0.1:%d' % s.server_address[1], file=sys.stderr, flush=True)\n"
       "s.serve_forever()\n",
       std::string(MSP_SOURCE_DIR) + "/tests/data"});
  ASSERT_GT(server.pid, 0);
  const int port = testing::WaitForListening(server);
  ASSERT_GT(port, 0) << server.err;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/native_bert";
  const std::string partial = data_ + "/models/.native_bert.partial";
  fs::create_directories(partial);
  std::ofstream(partial + "/.source") << url << "\n";
  std::ofstream(partial + "/model.safetensors.part") << std::string(1000, 'x');

  CliRun r = Run({"model", "pull", url});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& f : kServedFiles) {
    EXPECT_EQ(ReadAll(ModelPath("native_bert") + "/" + f), ReadAll(kModelDir + "/" + f)) << f;
  }
  testing::ReadStderrUntil(server, [](const std::string& t) { return t.find("GET /native_bert/config.json") != std::string::npos; },
                  std::chrono::seconds(10));
  EXPECT_NE(server.err.find("\"GET /native_bert/model.safetensors HTTP/1.1\" 200"), std::string::npos) << server.err;
  testing::Stop(server);
}

// A part that already holds the whole file (a pull stopped before renaming
// it): the Range asks for nothing more and the file is kept.
TEST_F(ModelVerbTest, ACompletePartIsKept) {
  const std::string partial = data_ + "/models/.tiny.partial";
  fs::create_directories(partial);
  std::ofstream(partial + "/.source") << server_.Url() << "\n";
  fs::copy_file(kModelDir + "/model.safetensors", partial + "/model.safetensors.part");
  // An old time on the part tells whether the file was kept or written again.
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  fs::last_write_time(partial + "/model.safetensors.part", old_time);
  CliRun r = Run({"model", "pull", server_.Url()});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectSameFiles("tiny");
  EXPECT_EQ(fs::last_write_time(ModelPath("tiny") + "/model.safetensors"), old_time);
  const size_t size = fs::file_size(kModelDir + "/model.safetensors");
  std::vector<std::string> reqs = server_.Requests();
  EXPECT_NE(std::find(reqs.begin(), reqs.end(), "model.safetensors range=bytes=" + std::to_string(size) + "-"),
            reqs.end())
      << ::testing::PrintToString(reqs);
}

TEST_F(ModelVerbTest, OnePullOfANameAtATime) {
  fs::create_directories(data_ + "/models");
  const std::string lock_path = data_ + "/models/.tiny.lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  CliRun busy = Run({"model", "pull", server_.Url()});
  EXPECT_NE(busy.code, 0);
  EXPECT_NE(busy.err.find("another `msp model pull`"), std::string::npos) << busy.err;
  EXPECT_TRUE(server_.Requests().empty());
  close(fd);
  CliRun r = Run({"model", "pull", server_.Url()});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectSameFiles("tiny");
}

TEST_F(ModelVerbTest, TheSha256IsVerified) {
  CliRun wrong = Run({"model", "pull", server_.Url(), "--sha256", std::string(64, '0')});
  EXPECT_NE(wrong.code, 0);
  EXPECT_NE(wrong.err.find("sha256"), std::string::npos) << wrong.err;
  EXPECT_FALSE(fs::exists(ModelPath("tiny")));
  EXPECT_FALSE(fs::exists(data_ + "/models/.tiny.partial"));

  CliRun bad = Run({"model", "pull", server_.Url(), "--sha256", "abc"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("64 hex"), std::string::npos) << bad.err;

  Result<std::string> sha = Sha256OfFile(kModelDir + "/model.safetensors");
  ASSERT_TRUE(sha.ok());
  std::string upper = *sha;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CliRun right = Run({"model", "pull", server_.Url(), "--sha256", upper, "--json"});
  ASSERT_EQ(right.code, 0) << right.err;
  const json pulled = json::parse(right.out);
  for (const json& f : pulled["files"]) {
    EXPECT_EQ(f["verified"].get<bool>(), f["path"] == "model.safetensors") << f.dump();
  }
}

TEST_F(ModelVerbTest, AMissingModelOrFileIsAClearError) {
  CliRun r = Run({"model", "pull", server_.Url("/nothing")});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("404"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model.safetensors"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ModelPath("nothing")));
  EXPECT_FALSE(fs::exists(data_ + "/models/.nothing.partial"));

  CliRun unknown = Run({"model", "pull", "no-such-model"});
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("all-MiniLM-L6-v2"), std::string::npos) << unknown.err;

  CliRun refused = Run({"model", "pull", "http://127.0.0.1:1/tiny", "--retries", "0"});
  EXPECT_NE(refused.code, 0);
  EXPECT_FALSE(fs::exists(ModelPath("tiny")));
}

TEST_F(ModelVerbTest, ListAndRemove) {
  CliRun empty = Run({"model", "list", "--json"});
  ASSERT_EQ(empty.code, 0) << empty.err;
  EXPECT_EQ(json::parse(empty.out), json::array());
  ASSERT_EQ(Run({"model", "pull", server_.Url()}).code, 0);
  ASSERT_EQ(Run({"model", "pull", server_.Url(), "--name", "second"}).code, 0);
  // A directory that is no model.
  fs::create_directories(ModelPath("broken"));
  std::ofstream(ModelPath("broken") + "/config.json") << "{}";

  CliRun list = Run({"model", "list", "--json"});
  ASSERT_EQ(list.code, 0) << list.err;
  json models = json::parse(list.out);
  ASSERT_EQ(models.size(), 3u) << models.dump();
  EXPECT_EQ(models[0]["name"], "broken");
  EXPECT_FALSE(models[0]["opens"].get<bool>());
  EXPECT_FALSE(models[0]["error"].get<std::string>().empty());
  EXPECT_EQ(models[1]["name"], "second");
  EXPECT_TRUE(models[1]["opens"].get<bool>());
  EXPECT_EQ(models[2]["name"], "tiny");
  EXPECT_EQ(models[2]["source"], server_.Url());
  EXPECT_GT(models[2]["bytes"].get<int64_t>(), static_cast<int64_t>(fs::file_size(kModelDir + "/model.safetensors")));
  CliRun text = Run({"model", "list"});
  EXPECT_NE(text.out.find("tiny"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("does not open"), std::string::npos) << text.out;

  // Names with a path separator are refused, and nothing outside is touched.
  fs::create_directories(data_ + "/x");
  for (const char* name : {"../x", "..", "a/b", ".tiny.partial"}) {
    CliRun r = Run({"model", "remove", name});
    EXPECT_NE(r.code, 0) << name;
    EXPECT_NE(r.err.find("model name"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::exists(data_ + "/x"));

  CliRun removed = Run({"model", "remove", "tiny"});
  ASSERT_EQ(removed.code, 0) << removed.err;
  EXPECT_FALSE(fs::exists(ModelPath("tiny")));
  EXPECT_TRUE(fs::exists(ModelPath("second")));
  CliRun missing = Run({"model", "remove", "tiny"});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.err.find("no model 'tiny'"), std::string::npos) << missing.err;
}

TEST_F(ModelVerbTest, EmbedderModelNamesAPulledModel) {
  ASSERT_EQ(Run({"model", "pull", server_.Url()}).code, 0);
  CliRun init = Run({"init", "--embedder", "native", "--embedder-model", "tiny"});
  ASSERT_EQ(init.code, 0) << init.err;
  CliRun write = Run({"write", "the cat sat on the mat", "--tag", "note", "--embedder", "native", "--embedder-model", "tiny"});
  ASSERT_EQ(write.code, 0) << write.err;
  CliRun stats = Run({"stats", "--json", "--embedder", "native", "--embedder-model", "tiny"});
  ASSERT_EQ(stats.code, 0) << stats.err;
  EXPECT_NE(stats.out.find("native:tiny:"), std::string::npos) << stats.out;
  // A name that was not pulled stays a (missing) directory.
  CliRun other = Run({"stats", "--embedder", "native", "--embedder-model", "absent"});
  EXPECT_NE(other.code, 0);
  EXPECT_NE(other.err.find("'absent' is not a directory"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace msp
