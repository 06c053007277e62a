// OpenAiStub: the scripted OpenAI-compatible server of the tests.
#include "tests/support/openai_stub.h"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "util/hash.h"
#include "util/text.h"

namespace msp::testing {
namespace {

// The stub's embedding hash seed: not FNV's offset basis (a digit short),
// kept so the stub's vectors stay what the tests were written against.
constexpr uint64_t kStubHashSeed = 1469598103934665603ULL;

nlohmann::json ChatEnvelope(nlohmann::json message, std::string_view finish_reason) {
  return {{"id", "chatcmpl-stub"},
          {"object", "chat.completion"},
          {"created", 0},
          {"model", "stub-model"},
          {"choices",
           nlohmann::json::array({{{"index", 0},
                                   {"message", std::move(message)},
                                   {"finish_reason", finish_reason}}})},
          {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 1}, {"total_tokens", 2}}}};
}

}  // namespace

StubReply StubReply::Json(const nlohmann::json& body, int status) {
  StubReply r;
  r.status = status;
  r.body = body.dump();
  return r;
}

StubReply StubReply::Error(int status, std::string_view message) {
  return Json({{"error", {{"message", message}, {"type", "stub_error"}}}}, status);
}

StubReply StubReply::ChatContent(std::string_view content) {
  return Json(ChatEnvelope({{"role", "assistant"}, {"content", content}}, "stop"));
}

StubReply StubReply::ChatToolCalls(const nlohmann::json& tool_calls) {
  return Json(ChatEnvelope(
      {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", tool_calls}}, "tool_calls"));
}

StubReply StubReply::Embeddings(const std::vector<std::vector<float>>& vectors,
                                std::string_view model) {
  nlohmann::json data = nlohmann::json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vectors[i]}});
  }
  return Json({{"object", "list"},
               {"data", data},
               {"model", model},
               {"usage", {{"prompt_tokens", 1}, {"total_tokens", 1}}}});
}

StubReply StubReply::Raw(int status, std::string body, std::string content_type) {
  StubReply r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

StubReply StubReply::Close() {
  StubReply r;
  r.close_connection = true;
  r.body = "{\"never\": \"sent\"}";
  return r;
}

std::string ResponseSchemaName(const StubRequest& request) {
  const nlohmann::json& j = request.json;
  if (!j.is_object() || !j.contains("response_format")) return "";
  const nlohmann::json& rf = j["response_format"];
  if (!rf.is_object() || rf.value("type", std::string()) != "json_schema" || !rf.contains("json_schema") ||
      !rf["json_schema"].is_object()) {
    return "";
  }
  return rf["json_schema"].value("name", std::string());
}

std::vector<float> StubEmbedding(std::string_view text, int dimension) {
  std::vector<float> v(static_cast<size_t>(dimension > 0 ? dimension : 1), 0.0f);
  auto add = [&](std::string_view token, float weight) {
    uint64_t h = Fnv1a64(token, kStubHashSeed);
    v[h % v.size()] += (h >> 63) != 0 ? -weight : weight;
  };
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!word.empty()) {
      add(word, 1.0f);
      word.clear();
    }
  }
  if (!word.empty()) add(word, 1.0f);
  add(text, 0.5f);
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm == 0) {
    v[0] = 1.0f;
    return v;
  }
  const float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& x : v) x *= inv;
  return v;
}

OpenAiStub::OpenAiStub() : server_(std::make_unique<httplib::Server>()) {
  defaults_[kEmbeddingsPath] = [this](const StubRequest& request) {
    int dimension = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dimension = embedding_dimension_;
    }
    const nlohmann::json& input = request.json.is_object() && request.json.contains("input")
                                      ? request.json["input"]
                                      : nlohmann::json();
    std::vector<std::vector<float>> vectors;
    if (input.is_string()) {
      vectors.push_back(StubEmbedding(input.get<std::string>(), dimension));
    } else if (input.is_array()) {
      for (const auto& item : input) {
        if (!item.is_string()) return StubReply::Error(400, "input items must be strings");
        vectors.push_back(StubEmbedding(item.get<std::string>(), dimension));
      }
    } else {
      return StubReply::Error(400, "'input' must be a string or an array of strings");
    }
    std::string model = request.json.value("model", std::string("stub-model"));
    return StubReply::Embeddings(vectors, model);
  };
  defaults_["/v1/models"] = [](const StubRequest&) {
    return StubReply::Json(
        {{"object", "list"}, {"data", nlohmann::json::array({{{"id", "stub-model"}, {"object", "model"}}})}});
  };

  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    StubRequest request;
    request.method = req.method;
    request.path = req.path;
    for (const auto& [name, value] : req.headers) request.headers[AsciiLower(name)] = value;
    request.body = req.body;
    request.json = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (request.json.is_discarded()) request.json = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    StubReply reply = Answer(request);
    WaitFor(reply.delay_ms);
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    if (reply.close_connection) {
      // Announce a body, then fail to produce it: httplib drops the connection.
      res.set_content_provider(
          reply.body.size() + 1, reply.content_type,
          [](size_t, size_t, httplib::DataSink&) { return false; });
      return;
    }
    res.set_content(reply.body, reply.content_type);
  };
  server_->Post(".*", handle);
  server_->Get(".*", handle);
  server_->set_keep_alive_max_count(1);
  // Headers and body go out in two writes: without TCP_NODELAY each reply
  // waited ~40 ms for the client's delayed ACK.
  server_->set_tcp_nodelay(true);
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) {
    port_ = 0;
    return;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the thread is listening would be lost and join() would
  // hang: wait until it listens.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server_->is_running()) {
    server_->stop();
    port_ = 0;
  }
}

OpenAiStub::~OpenAiStub() { Stop(); }

void OpenAiStub::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string OpenAiStub::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/v1";
}

void OpenAiStub::Enqueue(const std::string& path, StubReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  queues_[path].push_back(std::move(reply));
}

void OpenAiStub::SetDefault(const std::string& path, Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  defaults_[path] = std::move(handler);
}

void OpenAiStub::set_embedding_dimension(int dimension) {
  std::lock_guard<std::mutex> lock(mu_);
  embedding_dimension_ = dimension;
}

std::vector<StubRequest> OpenAiStub::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<StubRequest> OpenAiStub::Requests(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StubRequest> out;
  for (const auto& r : requests_) {
    if (r.path == path) out.push_back(r);
  }
  return out;
}

size_t OpenAiStub::RequestCount(const std::string& path) const { return Requests(path).size(); }

size_t OpenAiStub::Pending(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queues_.find(path);
  return it == queues_.end() ? 0 : it->second.size();
}

StubReply OpenAiStub::Answer(const StubRequest& request) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto q = queues_.find(request.path);
    if (q != queues_.end() && !q->second.empty()) {
      StubReply reply = std::move(q->second.front());
      q->second.pop_front();
      return reply;
    }
    auto d = defaults_.find(request.path);
    if (d != defaults_.end()) handler = d->second;
  }
  if (handler) return handler(request);
  return StubReply::Error(418, "openai_stub: no scripted reply for " + request.method + " " +
                                   request.path);
}

void OpenAiStub::WaitFor(int delay_ms) {
  if (delay_ms <= 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  stop_cv_.wait_for(lock, std::chrono::milliseconds(delay_ms), [this] { return stopping_; });
}

}  // namespace msp::testing
