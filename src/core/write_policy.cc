// The write policy and input validation.
#include "core/write_policy.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "util/text.h"
#include "util/time.h"
#include "util/utf8.h"

namespace msp {
namespace {

// `s` (valid UTF-8) with upper-case letters lowered in the scripts whose
// pairs are regular: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// (so "ДЯКУЮ" and "Merci" match "дякую" and "merci"). Other characters,
// and trailing punctuation of any script, are left to the caller.
std::string FoldCase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0xC0 && c < 0xE0 && i + 1 < s.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      len = 2;
    } else if (c >= 0xE0) {
      len = c < 0xF0 ? 3 : 4;
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    if (cp >= 'A' && cp <= 'Z') {
      cp += 0x20;
    } else if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2)) {
      cp += 0x20;  // Latin-1, Greek
    } else if (cp >= 0x100 && cp <= 0x17F && cp % 2 == 0 && cp != 0x130 && cp != 0x138) {
      cp += 1;  // Latin Extended-A pairs
    } else if (cp >= 0x410 && cp <= 0x42F) {
      cp += 0x20;  // А..Я
    } else if (cp >= 0x400 && cp <= 0x40F) {
      cp += 0x50;  // Ѐ..Џ (Є, І, Ї, Ў ...)
    } else if (cp >= 0x460 && cp <= 0x4FF && cp % 2 == 0 && !(cp >= 0x482 && cp <= 0x489)) {
      cp += 1;  // Ґ and the other Cyrillic pairs
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    i += len;
  }
  return out;
}

// `s` without trailing ASCII punctuation and the common non-ASCII marks
// ("!", "…", "！", "。").
std::string WithoutTrailingPunctuation(std::string s) {
  for (bool again = true; again && !s.empty();) {
    again = false;
    if (std::ispunct(static_cast<unsigned char>(s.back())) || s.back() == ' ') {
      s.pop_back();
      again = true;
      continue;
    }
    for (std::string_view mark : {std::string_view("\xE2\x80\xA6"), std::string_view("\xEF\xBC\x81"),
                                  std::string_view("\xE3\x80\x82"), std::string_view("\xC2\xA1"),
                                  std::string_view("\xC2\xBF")}) {
      if (s.ends_with(mark)) {
        s.resize(s.size() - mark.size());
        again = true;
        break;
      }
    }
  }
  return s;
}

Status CheckLabel(std::string_view field, std::string_view value) {
  size_t bad = 0;
  if (!IsValidUtf8(value, &bad)) {
    return Status::InvalidArgument(std::string(field) + " is not valid UTF-8 (byte " +
                                   std::to_string(bad) + ")");
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(field) + " contains a control character");
    }
  }
  if (value.size() > 256) {
    return Status::InvalidArgument(std::string(field) + " is longer than 256 bytes");
  }
  return Status::Ok();
}

// Characters (code points) of valid UTF-8: every byte that does not
// continue a sequence starts one.
size_t CountChars(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Status Refuse(std::string_view rule, const std::string& why) {
  return Status::Refused("policy rule " + std::string(rule) + ": " + why);
}

}  // namespace

Status ValidateText(std::string_view field, std::string_view text, size_t max_bytes, std::string_view setting) {
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    return Status::InvalidArgument(std::string(field) + " is not valid UTF-8 (first bad byte at offset " +
                                   std::to_string(bad) + ")");
  }
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return Status::InvalidArgument(std::string(field) + " contains a NUL character (\\u0000) at byte " +
                                   std::to_string(nul) + "; remove it");
  }
  if (TrimAsciiSpace(text).empty()) return Status::InvalidArgument(std::string(field) + " is empty");
  if (max_bytes > 0 && text.size() > max_bytes) {
    return Status::InvalidArgument(std::string(field) + " is " + std::to_string(text.size()) +
                                   " bytes; the limit is " + std::to_string(max_bytes) + " (" + std::string(setting) +
                                   ")");
  }
  return Status::Ok();
}

Status ValidateCommon(const Namespace& ns, const std::vector<std::string>& tags,
                      std::string_view source, double confidence, std::string_view body_json,
                      const std::vector<ProvenanceRef>& provenance) {
  if (ns.tenant.empty()) return Status::InvalidArgument("namespace.tenant is empty");
  const std::pair<const char*, const std::string*> parts[] = {
      {"namespace.tenant", &ns.tenant},   {"namespace.user", &ns.user},
      {"namespace.agent", &ns.agent},     {"namespace.session", &ns.session},
      {"namespace.mission", &ns.mission}, {"namespace.operator", &ns.operator_id}};
  for (const auto& [name, value] : parts) MSP_RETURN_IF_ERROR(CheckLabel(name, *value));
  for (const auto& t : tags) {
    if (TrimAsciiSpace(t).empty()) return Status::InvalidArgument("tags: a tag is empty");
    MSP_RETURN_IF_ERROR(CheckLabel("tags", t));
  }
  MSP_RETURN_IF_ERROR(CheckLabel("source", source));
  if (!(confidence >= 0.0 && confidence <= 1.0)) {
    return Status::InvalidArgument("confidence must be between 0 and 1, got " +
                                   std::to_string(confidence));
  }
  if (!body_json.empty()) {
    nlohmann::json body = nlohmann::json::parse(body_json, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return Status::InvalidArgument("body is not valid JSON");
    if (!body.is_object()) return Status::InvalidArgument("body must be a JSON object");
  }
  for (const auto& p : provenance) {
    if (p.type.empty() || p.ref.empty()) {
      return Status::InvalidArgument("provenance: each reference needs a type and a ref");
    }
    MSP_RETURN_IF_ERROR(CheckLabel("provenance.type", p.type));
    size_t bad = 0;
    if (!IsValidUtf8(p.ref, &bad) || !IsValidUtf8(p.detail, &bad)) {
      return Status::InvalidArgument("provenance is not valid UTF-8");
    }
    if (p.ref.find('\0') != std::string::npos || p.detail.find('\0') != std::string::npos) {
      return Status::InvalidArgument("provenance contains a NUL character (\\u0000); remove it");
    }
  }
  return Status::Ok();
}

Status CheckStructural(Sensitivity sensitivity, const WritePolicyOptions& policy) {
  if (policy.refuse_high_sensitivity && sensitivity == Sensitivity::kHigh) {
    return Refuse("sensitivity", "records of sensitivity high are never stored");
  }
  return Status::Ok();
}

Status CheckWorthStoring(const WriteRequest& r, const WritePolicyOptions& policy) {
  const std::string_view text = TrimAsciiSpace(r.text);
  const size_t chars = CountChars(text);
  if (policy.min_chars > 0 && chars < policy.min_chars) {
    return Refuse("min_chars", "text has " + std::to_string(chars) +
                                   " characters; at least " + std::to_string(policy.min_chars) +
                                   " are required");
  }
  const std::string lowered = WithoutTrailingPunctuation(FoldCase(text));
  for (const auto& phrase : policy.trivial_phrases) {
    if (lowered == WithoutTrailingPunctuation(FoldCase(phrase))) {
      return Refuse("trivial", "'" + std::string(text) + "' is a trivial phrase");
    }
  }
  MSP_RETURN_IF_ERROR(CheckStructural(r.sensitivity, policy));
  if (!policy.trusted_sources.empty() &&
      std::find(policy.trusted_sources.begin(), policy.trusted_sources.end(), r.source) ==
          policy.trusted_sources.end()) {
    std::string allowed;
    for (const auto& s : policy.trusted_sources) allowed += (allowed.empty() ? "" : ", ") + s;
    return Refuse("trusted_source", "source '" + r.source + "' is not trusted (trusted: " + allowed + ")");
  }
  if (policy.require_stable_tag) {
    bool found = false;
    for (const auto& t : r.tags) {
      if (std::find(policy.stable_tags.begin(), policy.stable_tags.end(), t) != policy.stable_tags.end()) {
        found = true;
      }
    }
    if (!found) {
      std::string stable;
      for (const auto& s : policy.stable_tags) stable += (stable.empty() ? "" : ", ") + s;
      return Refuse("stable_tag", "no stable tag: add one of " + stable + " to its tags");
    }
  }
  if (r.ttl_days != 0 && (r.ttl_days < policy.ttl_min_days || r.ttl_days > policy.ttl_max_days)) {
    return Refuse("ttl_range", "ttl_days=" + std::to_string(r.ttl_days) + " is outside " +
                                   std::to_string(policy.ttl_min_days) + ".." +
                                   std::to_string(policy.ttl_max_days));
  }
  return Status::Ok();
}

std::vector<std::string> SelectEvictions(const std::vector<Memory>& records, size_t adding,
                                         size_t limit, TimeMs now,
                                         const std::vector<std::string>& keep) {
  if (limit == 0 || records.size() + adding <= limit) return {};
  size_t excess = records.size() + adding - limit;
  struct Candidate {
    const Memory* m;
    double value;
  };
  std::vector<Candidate> cands;
  for (const auto& m : records) {
    if (std::find(keep.begin(), keep.end(), m.id) != keep.end()) continue;
    const TimeMs last_use = m.last_accessed > 0 ? m.last_accessed : m.created_at;
    const double idle_days = std::max<double>(0.0, static_cast<double>(now - last_use) / kMsPerDay);
    const double value = m.confidence * (1.0 + std::log1p(static_cast<double>(m.access_count))) /
                         (1.0 + idle_days / 30.0);
    cands.push_back({&m, value});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.m->criticality != b.m->criticality) return a.m->criticality < b.m->criticality;
    if (a.value != b.value) return a.value < b.value;
    if (a.m->created_at != b.m->created_at) return a.m->created_at < b.m->created_at;
    return a.m->id < b.m->id;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < cands.size() && out.size() < excess; ++i) out.push_back(cands[i].m->id);
  return out;
}

}  // namespace msp
