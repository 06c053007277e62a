// Loading LoCoMo and normalising its evidence ids.
#include "dataset.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace msp::locomo {
namespace {

using json = nlohmann::json;

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "007" -> "7", "0" -> "0".
std::string_view StripZeros(std::string_view digits) {
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  return digits;
}

// Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int64_t y, int m) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<size_t>(m - 1)];
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (!IsDigits(s) || s.size() > 9) return false;
  return std::from_chars(s.data(), s.data() + s.size(), *out).ec == std::errc();
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string StringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string_view TurnFormatName(TurnFormat f) {
  switch (f) {
    case TurnFormat::kSpeaker: return "speaker";
    case TurnFormat::kPlain: return "plain";
    case TurnFormat::kDated: return "dated";
  }
  return "speaker";
}

Result<TurnFormat> ParseTurnFormat(std::string_view name) {
  for (TurnFormat f : {TurnFormat::kSpeaker, TurnFormat::kPlain, TurnFormat::kDated}) {
    if (name == TurnFormatName(f)) return f;
  }
  return Status::InvalidArgument("unknown turn format '" + std::string(name) +
                                 "'; use speaker, plain or dated");
}

std::string_view CategoryName(int category) {
  static constexpr std::array<std::string_view, kCategories> kNames = {
      "multi-hop", "temporal", "open-domain", "single-hop", "adversarial"};
  return kNames[static_cast<size_t>(category - 1)];
}

std::string DefaultDataPath() {
  const char* env = std::getenv("MSP_LOCOMO");
  return env ? env : std::string(MSP_SOURCE_DIR) + "/../shared/bench-data/locomo10.json";
}

Result<TimeMs> ParseSessionDate(std::string_view date) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("session date '" + std::string(date) + "' " + why +
                                   "; expected like '1:56 pm on 8 May, 2023'");
  };
  static constexpr std::array<std::string_view, 12> kMonths = {
      "January", "February", "March",     "April",   "May",      "June",
      "July",    "August",   "September", "October", "November", "December"};
  const std::vector<std::string_view> w = Words(date);
  if (w.size() != 6 || w[2] != "on" || w[4].empty() || w[4].back() != ',') return bad("is malformed");
  const size_t colon = w[0].find(':');
  int64_t hour = 0, minute = 0, day = 0, year = 0;
  if (colon == std::string_view::npos || !ParseInt(w[0].substr(0, colon), &hour) ||
      !ParseInt(w[0].substr(colon + 1), &minute) || w[0].size() - colon - 1 != 2) {
    return bad("has no h:mm time");
  }
  if (hour < 1 || hour > 12 || minute > 59) return bad("has an impossible time");
  if (w[1] == "am") {
    hour = hour == 12 ? 0 : hour;
  } else if (w[1] == "pm") {
    hour = hour == 12 ? 12 : hour + 12;
  } else {
    return bad("has neither am nor pm");
  }
  const auto month_it = std::find(kMonths.begin(), kMonths.end(), w[4].substr(0, w[4].size() - 1));
  if (month_it == kMonths.end()) return bad("has an unknown month");
  const int month = static_cast<int>(month_it - kMonths.begin()) + 1;
  if (!ParseInt(w[3], &day) || !ParseInt(w[5], &year) || year < 1970) return bad("has a bad day or year");
  if (day < 1 || day > DaysInMonth(year, month)) return bad("has a day the month does not have");
  const int64_t days = DaysFromCivil(year, month, day);
  return ((days * 24 + hour) * 60 + minute) * 60 * 1000;
}

std::vector<std::string> SplitEvidence(std::string_view raw) {
  std::vector<std::string> out;
  size_t i = 0;
  const auto is_sep = [](char c) { return c == ';' || c == ',' || std::isspace(static_cast<unsigned char>(c)); };
  while (i < raw.size()) {
    while (i < raw.size() && is_sep(raw[i])) ++i;
    size_t j = i;
    while (j < raw.size() && !is_sep(raw[j])) ++j;
    if (j == i) break;
    std::string_view piece = raw.substr(i, j - i);
    i = j;
    std::string_view rest = piece;
    if (rest.empty() || rest.front() != 'D') {
      out.emplace_back(piece);
      continue;
    }
    rest.remove_prefix(1);
    if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || !IsDigits(rest.substr(0, colon)) ||
        !IsDigits(rest.substr(colon + 1))) {
      out.emplace_back(piece);
      continue;
    }
    out.push_back("D" + std::string(StripZeros(rest.substr(0, colon))) + ":" +
                  std::string(StripZeros(rest.substr(colon + 1))));
  }
  return out;
}

std::string FormatTurn(const Turn& turn, const std::string& session_date, TurnFormat format,
                       bool with_caption) {
  std::string out;
  if (format == TurnFormat::kDated) out = "[" + session_date + "] ";
  if (format != TurnFormat::kPlain) out += turn.speaker + ": ";
  out += turn.raw_text;
  if (with_caption && !turn.caption.empty()) out += " [image: " + turn.caption + "]";
  return out;
}

std::string_view SessionOf(std::string_view dia_id) { return dia_id.substr(0, dia_id.find(':')); }

Result<Dataset> LoadDataset(const std::string& path, TurnFormat format, bool with_caption,
                            int limit) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound("LoCoMo not found at " + path +
                            "; pass --data PATH or set MSP_LOCOMO to locomo10.json");
  }
  const json data = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (data.is_discarded() || !data.is_array()) {
    return Status::InvalidArgument(path + " is not JSON holding a list of LoCoMo samples");
  }
  Dataset out;
  try {
    for (const json& sample : data) {
      if (limit > 0 && static_cast<int>(out.conversations.size()) >= limit) break;
      Conversation c;
      c.sample_id = sample.at("sample_id").get<std::string>();
      const json& conv = sample.at("conversation");
      // session_N keys holding a list of turns, ordered by N.
      std::map<int, const json*> sessions;
      for (auto it = conv.begin(); it != conv.end(); ++it) {
        const std::string& key = it.key();
        int64_t n = 0;
        if (key.rfind("session_", 0) == 0 && ParseInt(std::string_view(key).substr(8), &n) &&
            it.value().is_array() && !it.value().empty()) {
          sessions[static_cast<int>(n)] = &it.value();
        }
      }
      for (const auto& [n, turns] : sessions) {
        Session s;
        s.number = n;
        s.date = StringField(conv, ("session_" + std::to_string(n) + "_date_time").c_str());
        Result<TimeMs> t = ParseSessionDate(s.date);
        if (!t.ok()) return t.status().WithContext(c.sample_id + " session_" + std::to_string(n));
        s.timestamp = *t;
        for (const json& tj : *turns) {
          Turn turn;
          turn.session = n;
          turn.index = static_cast<int>(s.turns.size()) + 1;
          turn.speaker = tj.at("speaker").get<std::string>();
          turn.raw_text = tj.at("text").get<std::string>();
          turn.caption = StringField(tj, "blip_caption");
          const std::vector<std::string> ids = SplitEvidence(tj.at("dia_id").get<std::string>());
          if (ids.size() != 1) {
            return Status::InvalidArgument(c.sample_id + ": turn with dia_id '" +
                                           tj.at("dia_id").get<std::string>() + "' is not one id");
          }
          turn.dia_id = ids.front();
          turn.text = FormatTurn(turn, s.date, format, with_caption);
          if (!c.turn_by_id.emplace(turn.dia_id, c.turns.size()).second) {
            return Status::InvalidArgument(c.sample_id + ": dia_id " + turn.dia_id + " appears twice");
          }
          s.turns.push_back(c.turns.size());
          c.turns.push_back(std::move(turn));
        }
        c.sessions.push_back(std::move(s));
      }
      for (const json& qa : sample.at("qa")) {
        EvidenceReport& r = out.evidence;
        ++r.questions;
        auto ev = qa.find("evidence");
        if (ev == qa.end() || !ev->is_array() || ev->empty()) {
          ++r.without_evidence;
          continue;
        }
        Question q;
        q.question = qa.at("question").get<std::string>();
        q.category = qa.at("category").get<int>();
        if (q.category < 1 || q.category > kCategories) {
          return Status::InvalidArgument(c.sample_id + ": question '" + q.question +
                                         "' has category " + std::to_string(q.category));
        }
        for (const json& e : *ev) {
          const std::string raw = e.get<std::string>();
          ++r.evidence_strings;
          const std::vector<std::string> ids = SplitEvidence(raw);
          const bool normalised = ids.size() != 1 || ids.front() != raw;
          if (normalised) ++r.strings_normalised;
          std::string kept;
          for (const std::string& id : ids) {
            if (!c.turn_by_id.count(id)) {
              ++r.ids_dropped;
              r.changes.push_back(c.sample_id + ": '" + raw + "': dropped '" + id + "' (names no turn)");
              continue;
            }
            kept += (kept.empty() ? "" : " ") + id;
            if (std::find(q.evidence.begin(), q.evidence.end(), id) == q.evidence.end()) {
              q.evidence.push_back(id);
            }
          }
          if (normalised && !kept.empty()) {
            r.changes.push_back(c.sample_id + ": '" + raw + "' -> " + kept);
          }
        }
        if (q.evidence.empty()) {
          ++r.all_evidence_dropped;
          continue;
        }
        c.questions.push_back(std::move(q));
      }
      out.conversations.push_back(std::move(c));
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(path + " does not have LoCoMo's structure: " + e.what());
  }
  return out;
}

void JoinTurns(Dataset* data, int n) {
  if (n <= 1) return;
  for (Conversation& c : data->conversations) {
    std::vector<Turn> passages;
    std::unordered_map<std::string, size_t> passage_by_id;
    std::unordered_map<std::string, std::string> passage_of;  // turn dia_id -> passage dia_id
    for (Session& s : c.sessions) {
      std::vector<size_t> joined;
      for (size_t i = 0; i < s.turns.size(); i += static_cast<size_t>(n)) {
        Turn p = c.turns[s.turns[i]];
        p.index = static_cast<int>(joined.size()) + 1;
        for (size_t j = i; j < std::min(s.turns.size(), i + static_cast<size_t>(n)); ++j) {
          const Turn& t = c.turns[s.turns[j]];
          if (j > i) {
            p.text += "\n" + t.text;
            p.raw_text += "\n" + t.raw_text;
          }
          passage_of[t.dia_id] = p.dia_id;
        }
        passage_by_id.emplace(p.dia_id, passages.size());
        joined.push_back(passages.size());
        passages.push_back(std::move(p));
      }
      s.turns = std::move(joined);
    }
    c.turns = std::move(passages);
    c.turn_by_id = std::move(passage_by_id);
    for (Question& q : c.questions) {
      std::vector<std::string> evidence;
      for (const std::string& e : q.evidence) {
        const std::string& p = passage_of.at(e);
        if (std::find(evidence.begin(), evidence.end(), p) == evidence.end()) evidence.push_back(p);
      }
      q.evidence = std::move(evidence);
    }
  }
}

}  // namespace msp::locomo
