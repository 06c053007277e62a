// `msp demo`: seed 000's end-to-end example on the embedded default.
//
// Day 1 a user cannot install a Python package on Windows 11; the steps are
// written as episodes and consolidation distils facts. Day 14 the user says
// "the same script fails again" and retrieval brings those facts back. Each
// phase of the cycle (retrieve, inject, execute, write, consolidate) prints
// what it stored and found. There is no model: the agent's turns are
// scripted, and the demo says so; everything msp does is real.
#include "cli/demo.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "msp/memory.h"
#include "util/fence.h"
#include "util/time.h"
#include "working/tokens.h"
#include "working/working_memory.h"

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr char kMarker[] = ".msp-demo";
constexpr char kSystemPrompt[] =
    "You are a helpful support agent for Python users. Use what memory tells you about the user; "
    "do not ask again for what you already know.";
constexpr char kWebSearchSchema[] =
    R"({"name":"web_search","description":"Search the web","parameters":{"type":"object",)"
    R"("properties":{"query":{"type":"string"}},"required":["query"]}})";

class DemoClock final : public Clock {
 public:
  explicit DemoClock(TimeMs t) : now_(t) {}
  TimeMs NowMs() const override { return now_.load(); }
  void Set(TimeMs t) { now_ = t; }
  void Tick() { now_ += 7000; }  // each step takes a few seconds

 private:
  std::atomic<TimeMs> now_;
};

class Demo {
 public:
  Demo(MemoryLayer& mem, DemoClock& clock, std::ostream& out) : mem_(mem), clock_(clock), out_(out) {
    user_.tenant = "demo";
    user_.user = "user-42";
  }

  Status Run() {
    const TimeMs day1 = *ParseIso8601("2026-03-02T09:00:00Z");
    clock_.Set(day1);
    Banner("Day 1 · " + FormatIso8601(day1).substr(0, 10) + " · session day-1");
    MSP_RETURN_IF_ERROR(Turn("day-1",
                             "Hi! I can't install the numpy package on Windows 11. My script fails "
                             "with Python 3.11 when it imports numpy.",
                             /*day_one=*/true));
    clock_.Set(day1 + 13 * kMsPerDay + 5 * 3600 * 1000);
    Banner("Day 14 · " + FormatIso8601(clock_.NowMs()).substr(0, 10) + " · session day-14");
    MSP_RETURN_IF_ERROR(Turn("day-14", "Hi, the same script fails again.", /*day_one=*/false));
    return Summary();
  }

 private:
  void Banner(const std::string& title) {
    out_ << "\n" << std::string(72, '=') << "\n" << title << "\n" << std::string(72, '=') << "\n";
  }
  void Phase(const std::string& name, const std::string& what) {
    out_ << "\n[" << name << "] " << what << "\n";
  }

  Status Turn(const std::string& session, const std::string& request, bool day_one) {
    Namespace ns = user_;
    ns.session = session;
    out_ << "user: \"" << request << "\"\n";

    // 1. Retrieve.
    RetrieveRequest rr;
    rr.scope = user_;
    rr.query = request;
    rr.top_k = 6;
    MSP_ASSIGN_OR_RETURN(auto hits, mem_.Retrieve(rr));
    Phase("retrieve", "hybrid search (BM25 + cosine, fused) over " + user_.ToString() + ": " +
                          std::to_string(hits.size()) + " hit(s)");
    if (hits.empty()) out_ << "  memory is empty: nothing is known about this user yet\n";
    for (const auto& h : hits) {
      out_ << "  " << std::fixed << std::setprecision(3) << h.score << "  " << std::setw(7) << std::left
           << KindName(h.memory.kind) << std::right << "  " << (h.passage.empty() ? h.memory.text : h.passage) << "\n";
    }

    // 2. Inject: assemble working memory.
    WorkingMemoryInput in;
    in.system_prompt = kSystemPrompt;
    // The demo runs on the default settings: their trusted sources.
    const std::vector<std::string> trusted = WritePolicyOptions{}.context_trusted_sources;
    for (const auto& h : hits) {
      if (h.memory.kind == Kind::kFact) {
        in.facts.push_back(
            {h.memory.id, h.passage.empty() ? h.memory.text : h.passage, h.score, h.memory.source,
             IsTrustedSource(h.memory.source, trusted)});
      } else if (h.memory.kind == Kind::kEpisode && h.memory.ns.session != session) {
        auto ep = WorkingEpisodeFromMemory(h.memory);
        if (!ep.ok()) continue;
        ep->trusted = IsTrustedSource(h.memory.source, trusted);
        in.retrieved.push_back(*ep);
      }
    }
    std::sort(in.retrieved.begin(), in.retrieved.end(),
              [](const WorkingEpisode& a, const WorkingEpisode& b) { return a.step_number < b.step_number; });
    MSP_ASSIGN_OR_RETURN(auto recent, mem_.LastSteps(user_, session, 10));
    for (const auto& m : recent) {
      auto ep = WorkingEpisodeFromMemory(m);
      if (!ep.ok()) continue;
      ep->trusted = IsTrustedSource(m.source, trusted);
      in.recent.push_back(*ep);
    }
    in.tool_schemas = {kWebSearchSchema};
    in.request = request;
    WorkingMemoryBudget budget;
    budget.context_tokens = 4096;
    budget.reply_reserve = 1024;
    auto counter = DefaultTokenCounter();
    MSP_ASSIGN_OR_RETURN(auto wm, PackWorkingMemory(in, budget, *counter));
    Phase("inject", "working memory for the model call: " + std::to_string(wm.total_tokens) + " of " +
                        std::to_string(wm.budget) + " tokens (counter: " + wm.counter_name + ")");
    std::istringstream report(wm.Report());
    for (std::string line; std::getline(report, line);) out_ << "  | " << line << "\n";

    // 3. Execute (scripted: the demo has no model).
    std::vector<EpisodeStep> steps;
    auto step = [&](EpisodeType type, std::string text, std::string tool = "") {
      EpisodeStep s;
      s.ns = ns;
      s.type = type;
      s.text = std::move(text);
      s.tool_name = std::move(tool);
      s.source = type == EpisodeType::kUserMessage ? "user" : "agent";
      steps.push_back(std::move(s));
    };
    step(EpisodeType::kUserMessage, request);
    if (day_one) {
      Phase("execute", "scripted agent (no model in the demo) calls web_search");
      step(EpisodeType::kToolCall, R"(web_search {"query": "numpy install fails Windows 11 Python 3.11"})",
           "web_search");
      step(EpisodeType::kToolResult,
           "Known issue: numpy wheels for Python 3.11 on Windows need pip 22 or newer; older pip "
           "tries to build numpy from source and fails.",
           "web_search");
      step(EpisodeType::kAgentResponse,
           "Your pip is too old for the numpy wheel. Run `python -m pip install --upgrade pip`, then "
           "`pip install numpy` again.");
    } else {
      std::string recalled;
      for (const auto& f : in.facts) recalled += (recalled.empty() ? "" : " ") + f.text;
      Phase("execute", "scripted agent (no model in the demo) answers from the injected memory");
      step(EpisodeType::kAgentResponse,
           recalled.empty() ? std::string("Could you describe the problem again?")
                            : "From our last session I remember: " + recalled +
                                  " Did you upgrade pip before installing numpy this time?");
    }
    for (const auto& s : steps) {
      if (s.type != EpisodeType::kUserMessage) out_ << "  " << EpisodeTypeName(s.type) << ": " << s.text << "\n";
    }

    // 4. Write: each step becomes an episode.
    Phase("write", "episodes stored in " + ns.ToString());
    for (const auto& s : steps) {
      clock_.Tick();
      MSP_ASSIGN_OR_RETURN(Memory m, mem_.AddEpisode(s));
      out_ << "  step " << m.step_number << "  " << std::setw(14) << std::left << EpisodeTypeName(s.type)
           << std::right << "  " << m.id << "\n";
    }

    // 5. Consolidate: the session ends; facts are distilled from its episodes.
    MSP_ASSIGN_OR_RETURN(auto rep, mem_.EndSession(ns, session));
    Phase("consolidate", "session end: " + std::to_string(rep.episodes_read) + " episode(s) read, " +
                             std::to_string(rep.candidates) + " candidate fact(s), " +
                             std::to_string(rep.facts_added) + " added, " + std::to_string(rep.facts_merged) +
                             " merged into existing facts (rule-based extractor)");
    for (const auto& id : rep.fact_ids) {
      MSP_ASSIGN_OR_RETURN(Memory f, mem_.Get(user_, id));
      std::string tags;
      for (const auto& t : f.tags) tags += (tags.empty() ? "" : ",") + t;
      out_ << "  fact " << f.id.substr(0, 8) << "  confidence " << std::fixed << std::setprecision(2)
           << f.confidence << "  [" << tags << "]  " << f.text << "  (from " << f.provenance.size()
           << " episode(s))\n";
    }
    return Status::Ok();
  }

  Status Summary() {
    MSP_ASSIGN_OR_RETURN(Stats s, mem_.GetStats(user_));
    Banner("What msp holds now");
    out_ << "  store      " << s.store_path << "\n";
    out_ << "  records    " << s.records << " (";
    for (size_t i = 0; i < s.by_kind.size(); ++i) {
      out_ << (i ? ", " : "") << s.by_kind[i].second << " " << s.by_kind[i].first;
    }
    out_ << ")\n  changes    " << s.last_seq << " (indexes caught up to " << s.lexical_applied_seq << ")\n";
    out_ << "  audit log  " << s.audit_events << " events\n";
    out_ << "  embedder   " << s.embedder_id << " (built-in, lexical; no model needed)\n";
    return Status::Ok();
  }

  MemoryLayer& mem_;
  DemoClock& clock_;
  std::ostream& out_;
  Namespace user_;
};

}  // namespace

int RunDemo(const Options& base, std::ostream& out, std::ostream& err) {
  Options options = base;
  const fs::path dir = options.store.data_dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!fs::exists(dir / kMarker, ec)) {
      err << "msp demo: " << dir.string()
          << " is not empty and was not made by msp demo; give an empty or new --data-dir\n";
      return 2;
    }
    fs::remove_all(dir, ec);
  }
  fs::create_directories(dir, ec);
  if (ec) {
    err << "msp demo: cannot create " << dir.string() << ": " << ec.message() << "\n";
    return 1;
  }
  std::ofstream(dir / kMarker) << "made by msp demo; safe to delete\n";

  auto clock = std::make_shared<DemoClock>(0);
  auto mem = MemoryLayer::Open(options, clock);
  if (!mem.ok()) {
    err << "msp demo: " << mem.status().ToString() << "\n";
    return 1;
  }
  out << "msp demo: seed 000's example on the embedded default (SQLite store, Xapian BM25, built-in\n"
         "hashing embedder, rule-based consolidation; no model). The agent's turns are scripted.\n"
         "data directory: "
      << dir.string() << "\n";
  Demo demo(**mem, *clock, out);
  Status s = demo.Run();
  if (!s.ok()) {
    err << "msp demo: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace msp
