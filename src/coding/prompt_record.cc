// Prompt records: metadata JSON, ref names, random bits.
#include "coding/prompt_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include <nlohmann/json.hpp>

#include "util/time.h"

namespace msp {
namespace {
constexpr char kRefPrefix[] = "refs/prompts/";
}  // namespace

uint64_t RandomBits() {
  uint64_t r = 0;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = ::read(fd, &r, sizeof r);
    ::close(fd);
    if (n == static_cast<ssize_t>(sizeof r)) return r;
  }
  std::mt19937_64 gen(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                      (static_cast<uint64_t>(::getpid()) << 32));
  return gen();
}

std::string PromptRefName(TimeMs at, uint64_t random) {
  const std::time_t secs = static_cast<std::time_t>(at / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s%04d-%02d-%02d/%02d%02d%02d%03d-%012llx", kRefPrefix, tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(at % 1000),
                static_cast<unsigned long long>(random & 0xffffffffffffULL));
  return buf;
}

TimeMs PromptRefTime(std::string_view name) {
  constexpr size_t kPrefix = sizeof kRefPrefix - 1;
  // YYYY-MM-DD/HHMMSSmmm-
  if (name.size() < kPrefix + 21 || name.substr(0, kPrefix) != kRefPrefix) return -1;
  const std::string_view s = name.substr(kPrefix);
  auto num = [&](size_t pos, size_t len) -> int {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s[4] != '-' || s[7] != '-' || s[10] != '/' || s[20] != '-') return -1;
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(13, 2), se = num(15, 2),
            ms = num(17, 3);
  if (y < 0 || mo < 1 || d < 1 || h < 0 || mi < 0 || se < 0 || ms < 0) return -1;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  return static_cast<TimeMs>(timegm(&tm)) * 1000 + ms;
}

std::string PromptMetadataJson(const CapturedPrompt& p) {
  nlohmann::json j = {
      {"format", 1},
      {"captured_at", FormatIso8601(p.at)},
      {"captured_at_ms", p.at},
      {"agent", p.agent},
      {"hook_event_name", p.hook_event},
      {"session_id", p.session_id},
      {"transcript_path", p.transcript_path},
      {"cwd", p.cwd},
      {"repository", p.repository},
      {"branch", p.branch},
      {"head", p.head},
      {"permission_mode", p.permission_mode},
  };
  if (!p.extra_json.empty()) {
    nlohmann::json extra = nlohmann::json::parse(p.extra_json, nullptr, /*allow_exceptions=*/false);
    if (extra.is_object() && !extra.empty()) j["hook"] = std::move(extra);
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Status ParsePromptMetadata(const std::string& json, CapturedPrompt* p) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("meta.json is not a JSON object");
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (auto it = j.find("captured_at_ms"); it != j.end() && it->is_number_integer()) p->at = it->get<TimeMs>();
  p->agent = str("agent");
  p->hook_event = str("hook_event_name");
  p->session_id = str("session_id");
  p->transcript_path = str("transcript_path");
  p->cwd = str("cwd");
  p->repository = str("repository");
  p->branch = str("branch");
  p->head = str("head");
  p->permission_mode = str("permission_mode");
  if (auto it = j.find("hook"); it != j.end() && it->is_object()) p->extra_json = it->dump();
  return Status::Ok();
}

}  // namespace msp
