// The printed forms of answers (answer_text.h).
#include "cli/answer_text.h"

#include <cstdint>
#include <string>

#include "cli/cli.h"
#include "codec/memory_json.h"

namespace msp {
namespace {

using nlohmann::json;

void PrintSearchLines(const json& answer, std::ostream& out) {
  const json& hits = answer["hits"];
  if (hits.empty()) out << "no results\n";
  for (const json& h : hits) {
    const json& m = h["memory"];
    out << Fixed(h["score"].get<double>(), 3) << "  " << m["kind"].get<std::string>() << "  "
        << m["id"].get<std::string>() << "  " << OneLine(m["text"].get<std::string>()) << "\n";
    if (h.contains("passage")) {
      const json& p = h["passage"];
      out << "       passage: bytes " << p["begin"].get<int64_t>() << ".." << p["end"].get<int64_t>() << " of "
          << p["text_bytes"].get<int64_t>() << " (msp get " << m["id"].get<std::string>() << ": the whole)\n";
    }
    for (const json& c : h["explain"]) {
      const int rank = c["rank"].get<int>();
      out << "       " << c["signal"].get<std::string>() << ": "
          << (rank == 0 ? std::string("not found")
                        : "rank " + std::to_string(rank) + ", raw " + Fixed(c["raw"].get<double>(), 4))
          << ", adds " << Fixed(c["contribution"].get<double>(), 4) << "\n";
    }
  }
  const json& sessions = answer["sessions"];
  if (!sessions.empty()) out << "sessions:\n";
  for (const json& s : sessions) {
    out << Fixed(s["score"].get<double>(), 3) << "  " << s["namespace"].value("session", std::string()) << "  best "
        << s["best_id"].get<std::string>() << "\n";
  }
}

}  // namespace

bool PrintAnswer(std::string_view operation, std::string_view form, const json& answer, std::ostream& out) {
  if (form == "json") {
    out << DumpJson(answer) << "\n";
    return true;
  }
  if (form == "search" && operation == "search") {
    PrintSearchLines(answer, out);
    return true;
  }
  return false;
}

}  // namespace msp
