// The recent-prompts file: format, the walk over loose prompt refs, and the
// checked read SessionStart uses.
#include "coding/recent_prompts.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace msp {
namespace {

namespace fs = std::filesystem;

constexpr int kFormat = 1;
constexpr std::string_view kPromptRefs = "refs/prompts/";

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool IsHex40(std::string_view s) {
  if (s.size() != 40) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::string RecentPromptsPath(const std::string& repository) { return repository + "/msp-recent.json"; }

bool PromptRefsPacked(const std::string& repository) {
  std::ifstream packed(repository + "/packed-refs");
  for (std::string line; packed && std::getline(packed, line);) {
    if (line.find(" refs/prompts/") != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> PromptRefDays(const std::string& repository) {
  std::vector<std::string> days;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(repository) / "refs" / "prompts", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string day = it->path().filename().string();
    if (PromptRefTime(std::string(kPromptRefs) + day + "/000000000-") < 0) continue;
    days.push_back(std::move(day));
  }
  std::sort(days.rbegin(), days.rend());
  return days;
}

bool PromptInRepository(const CapturedPrompt& p, const std::string& worktree) {
  if (p.repository == worktree) return true;
  const size_t slash = p.repository.find_last_of('/');
  return slash != std::string::npos && p.repository.substr(slash + 1) == worktree;
}

std::optional<std::vector<std::string>> NewestPromptRefs(const std::string& repository, size_t max) {
  if (PromptRefsPacked(repository)) return std::nullopt;
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path root = fs::path(repository) / "refs" / "prompts";
  for (const std::string& day : PromptRefDays(repository)) {
    if (out.size() >= max) break;
    std::vector<std::string> names;
    for (fs::directory_iterator it(root / day, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = std::string(kPromptRefs) + day + "/" + it->path().filename().string();
      // A ref being written has only its lock file so far.
      if (EndsWith(name, ".lock") || PromptRefTime(name) < 0) continue;
      names.push_back(std::move(name));
    }
    // Names in a day sort by time (HHMMSSmmm), then by their random part.
    std::sort(names.rbegin(), names.rend());
    for (std::string& n : names) {
      if (out.size() >= max) break;
      out.push_back(std::move(n));
    }
  }
  return out;
}

std::string LooseRefId(const std::string& repository, const std::string& ref) {
  std::ifstream f(repository + "/" + ref);
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  return IsHex40(line) ? line : "";
}

std::string RecentPromptsJson(const std::vector<RecentPrompt>& entries) {
  nlohmann::json list = nlohmann::json::array();
  for (const RecentPrompt& e : entries) {
    const CapturedPrompt& p = e.prompt;
    nlohmann::json j = {{"ref", p.ref},        {"id", p.id},
                        {"at", p.at},          {"agent", p.agent},
                        {"session_id", p.session_id}, {"repository", p.repository},
                        {"branch", p.branch}};
    if (e.text_omitted) {
      j["text_omitted"] = true;
    } else {
      j["text"] = p.text;
    }
    list.push_back(std::move(j));
  }
  nlohmann::json doc = {{"format", kFormat}, {"prompts", std::move(list)}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::vector<RecentPrompt>> ParseRecentPrompts(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat || !doc.contains("prompts") ||
      !doc["prompts"].is_array()) {
    return Status::InvalidArgument("not a recent-prompts file of format " + std::to_string(kFormat));
  }
  std::vector<RecentPrompt> out;
  for (const nlohmann::json& j : doc["prompts"]) {
    if (!j.is_object()) return Status::InvalidArgument("a recent-prompts entry is not an object");
    RecentPrompt e;
    CapturedPrompt& p = e.prompt;
    struct Field {
      const char* key;
      std::string* out;
    };
    for (const Field& f : {Field{"ref", &p.ref}, Field{"id", &p.id}, Field{"agent", &p.agent},
                           Field{"session_id", &p.session_id}, Field{"repository", &p.repository},
                           Field{"branch", &p.branch}}) {
      if (!j.contains(f.key) || !j[f.key].is_string()) {
        return Status::InvalidArgument(std::string("a recent-prompts entry has no string '") + f.key + "'");
      }
      *f.out = j[f.key].get<std::string>();
    }
    if (!j.contains("at") || !j["at"].is_number_integer()) {
      return Status::InvalidArgument("a recent-prompts entry has no integer 'at'");
    }
    p.at = j["at"].get<TimeMs>();
    if (j.contains("text") && j["text"].is_string()) {
      p.text = j["text"].get<std::string>();
    } else if (j.contains("text_omitted") && j["text_omitted"] == true) {
      e.text_omitted = true;
    } else {
      return Status::InvalidArgument("a recent-prompts entry has neither 'text' nor 'text_omitted'");
    }
    if (PromptRefTime(p.ref) < 0 || !IsHex40(p.id)) {
      return Status::InvalidArgument("a recent-prompts entry names no prompt ref and commit");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<RecentPrompt>> ReadRecentPromptsFile(const std::string& repository) {
  const std::string path = RecentPromptsPath(repository);
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound("no recent-prompts file at '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseRecentPrompts(ss.str());
}

Status WriteRecentPromptsFile(const std::string& repository, const std::vector<RecentPrompt>& entries) {
  const std::string path = RecentPromptsPath(repository);
  const std::string tmp = path + "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << RecentPromptsJson(entries);
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      return Status::IoError("cannot write '" + tmp + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::IoError("cannot replace '" + path + "'");
  }
  return Status::Ok();
}

std::optional<std::vector<CapturedPrompt>> RecentPromptsFromFile(const std::string& repository,
                                                                 const std::string& worktree, size_t n) {
  Result<std::vector<RecentPrompt>> file = ReadRecentPromptsFile(repository);
  if (!file.ok()) return std::nullopt;
  std::unordered_map<std::string_view, const RecentPrompt*> by_ref;
  for (const RecentPrompt& e : *file) by_ref.emplace(e.prompt.ref, &e);
  const std::optional<std::vector<std::string>> refs = NewestPromptRefs(repository, kRecentPromptsKept);
  if (!refs) return std::nullopt;
  std::vector<CapturedPrompt> out;
  for (const std::string& ref : *refs) {
    if (out.size() >= n) break;
    // Every ref on the way must be known, with the commit the file names.
    auto it = by_ref.find(ref);
    if (it == by_ref.end() || LooseRefId(repository, ref) != it->second->prompt.id) return std::nullopt;
    if (!PromptInRepository(it->second->prompt, worktree)) continue;
    if (it->second->text_omitted) return std::nullopt;
    out.push_back(it->second->prompt);
  }
  // Fewer than asked: complete only when the walk saw every prompt ref.
  if (out.size() < n && refs->size() >= kRecentPromptsKept) return std::nullopt;
  return out;
}

}  // namespace msp
