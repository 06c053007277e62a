// A scripted OpenAI-compatible HTTP server for tests: it listens on
// 127.0.0.1 (any free port) in a thread of the test process and answers
// POST /v1/embeddings and POST /v1/chat/completions (and any other path)
// from a queue of scripted replies per path, falling back to a default
// handler per path when the queue is empty. Every request is recorded
// (method, path, headers, body) for assertions.
//
// Defaults: /v1/embeddings returns a deterministic unit vector per input
// (StubEmbedding), /v1/models lists "stub-model", every other path answers
// HTTP 418 "no scripted reply" so a missing script is loud.
//
// Thread-safe. Used by tests only.
#ifndef MSP_TESTS_SUPPORT_OPENAI_STUB_H_
#define MSP_TESTS_SUPPORT_OPENAI_STUB_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace msp::testing {

inline constexpr const char* kEmbeddingsPath = "/v1/embeddings";
inline constexpr const char* kChatPath = "/v1/chat/completions";

// One scripted reply.
struct StubReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;               // wait this long before answering
  // Send the status line and headers announcing the body, then drop the
  // connection without the body: the client sees the connection close
  // mid-reply.
  bool close_connection = false;

  // A JSON body with `status`.
  static StubReply Json(const nlohmann::json& body, int status = 200);
  // An OpenAI-style error body {"error": {"message", "type"}} with `status`.
  static StubReply Error(int status, std::string_view message);
  // A chat completion whose first choice's message content is `content`.
  static StubReply ChatContent(std::string_view content);
  // A chat completion whose message carries `tool_calls` (an array of
  // {"id", "type": "function", "function": {"name", "arguments"}}).
  static StubReply ChatToolCalls(const nlohmann::json& tool_calls);
  // An embeddings reply with one entry per vector.
  static StubReply Embeddings(const std::vector<std::vector<float>>& vectors,
                              std::string_view model = "stub-model");
  // Raw text (malformed JSON, HTML...).
  static StubReply Raw(int status, std::string body, std::string content_type = "text/plain");
  // A reply whose connection closes before the body.
  static StubReply Close();
};

struct StubRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
  nlohmann::json json;  // the parsed body; null when it is not JSON
};

// The json_schema name a chat request asks for in response_format ("" when
// it asks for none or another format).
std::string ResponseSchemaName(const StubRequest& request);

// A deterministic unit-length vector of `dimension` floats for `text`
// (hashes of the text's words and of the whole text, normalised); the same
// text always gets the same vector, texts with shared words are closer.
std::vector<float> StubEmbedding(std::string_view text, int dimension);

class OpenAiStub {
 public:
  using Handler = std::function<StubReply(const StubRequest&)>;

  // Binds 127.0.0.1 on a free port and starts serving. ok() false when the
  // bind failed.
  OpenAiStub();
  ~OpenAiStub();
  OpenAiStub(const OpenAiStub&) = delete;
  OpenAiStub& operator=(const OpenAiStub&) = delete;

  bool ok() const { return port_ > 0; }
  int port() const { return port_; }
  // "http://127.0.0.1:<port>/v1": the base URL a client is configured with.
  std::string base_url() const;

  // Appends a reply to the queue of `path` (e.g. kChatPath); each request to
  // the path takes the next one.
  void Enqueue(const std::string& path, StubReply reply);
  // Replaces the default handler of `path` (used when its queue is empty).
  void SetDefault(const std::string& path, Handler handler);
  // The dimension of the default embeddings (8 unless set).
  void set_embedding_dimension(int dimension);

  // Every request received so far, in arrival order (optionally of one path).
  std::vector<StubRequest> Requests() const;
  std::vector<StubRequest> Requests(const std::string& path) const;
  size_t RequestCount(const std::string& path) const;
  // Scripted replies still waiting in the queue of `path`.
  size_t Pending(const std::string& path) const;

  // Stops serving (a delayed reply is cut short); idempotent.
  void Stop();

 private:
  StubReply Answer(const StubRequest& request);
  void WaitFor(int delay_ms);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int embedding_dimension_ = 8;
  std::map<std::string, std::deque<StubReply>> queues_;
  std::map<std::string, Handler> defaults_;
  std::vector<StubRequest> requests_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_OPENAI_STUB_H_
