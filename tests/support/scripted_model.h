// A scripted chat model for consolidation tests, on top of OpenAiStub: it
// answers the LLM extractor's two requests ("facts" and "decisions", told
// apart by the json_schema name) from queues the test fills. With no
// scripted "facts" reply it answers {"facts": []}; with no scripted
// "decisions" reply it adds every new fact. A reply may carry a delay.
//
// Header-only; thread-safe. Used by tests only.
#ifndef MSP_TESTS_SUPPORT_SCRIPTED_MODEL_H_
#define MSP_TESTS_SUPPORT_SCRIPTED_MODEL_H_

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/openai_stub.h"

namespace msp::testing {

class ScriptedModel {
 public:
  // Installs itself as the chat handler of `stub`, which must outlive it.
  explicit ScriptedModel(OpenAiStub* stub) {
    stub->SetDefault(kChatPath, [this](const StubRequest& request) { return Answer(request); });
  }

  // The next extraction reply: {"facts": facts}. (A vector, not a json:
  // a braced list of one json would be taken for that json itself.)
  void AddFacts(const std::vector<nlohmann::json>& facts, int delay_ms = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    StubReply r = StubReply::ChatContent(nlohmann::json{{"facts", facts}}.dump());
    r.delay_ms = delay_ms;
    facts_.push_back(r);
  }
  // The next extraction reply, as given (errors, malformed bodies...).
  void AddFactsReply(StubReply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    facts_.push_back(std::move(reply));
  }
  // The next decide reply: {"decisions": decisions}.
  void AddDecisions(const std::vector<nlohmann::json>& decisions) {
    std::lock_guard<std::mutex> lock(mu_);
    decisions_.push_back(StubReply::ChatContent(nlohmann::json{{"decisions", decisions}}.dump()));
  }

  // One fact as the extractor's schema wants it.
  static nlohmann::json Fact(const std::string& text, std::vector<int> steps, double confidence = 0.9,
                             const std::string& tag = "preference", const std::string& valid_from = "") {
    return {{"text", text}, {"confidence", confidence}, {"tags", {tag}}, {"steps", steps}, {"valid_from", valid_from}};
  }

 private:
  StubReply Answer(const StubRequest& request) {
    const std::string name = ResponseSchemaName(request);
    std::lock_guard<std::mutex> lock(mu_);
    if (name == "facts") {
      if (facts_.empty()) return StubReply::ChatContent("{\"facts\": []}");
      StubReply r = facts_.front();
      facts_.pop_front();
      return r;
    }
    if (name == "decisions") {
      if (!decisions_.empty()) {
        StubReply r = decisions_.front();
        decisions_.pop_front();
        return r;
      }
      // Add every new fact listed.
      nlohmann::json all = nlohmann::json::array();
      const std::string listing = request.json["messages"].back().value("content", std::string());
      for (int i = 0; listing.find("New fact " + std::to_string(i) + ":") != std::string::npos; ++i) {
        all.push_back({{"candidate", i}, {"action", "add"}, {"target", ""}});
      }
      return StubReply::ChatContent(nlohmann::json{{"decisions", all}}.dump());
    }
    return StubReply::Error(418, "scripted model: unexpected request");
  }

  std::mutex mu_;
  std::deque<StubReply> facts_;
  std::deque<StubReply> decisions_;
};

}  // namespace msp::testing

#endif  // MSP_TESTS_SUPPORT_SCRIPTED_MODEL_H_
