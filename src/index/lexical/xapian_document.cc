// The lexical index's documents (xapian_document.h): a record's terms and
// values, the stop words, and the time encoding.
#include "index/lexical/xapian_document.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <xapian.h>

#include "util/hash.h"
#include "util/passages.h"

namespace msp::xapian_lexical {
namespace {

// Xapian (glass) terms are at most 245 bytes. Longer values keep a prefix of
// themselves plus a 64-bit hash of the whole value.
constexpr size_t kMaxTermValue = 200;
constexpr size_t kKeptValuePrefix = 160;

// An English stop-word list: function words that carry no topic. "may" is
// not one: it names a month (see the date terms).
constexpr std::string_view kEnglishStopWords[] = {
    "a",        "about",   "above",   "after",   "again",    "against", "all",     "am",
    "an",       "and",     "any",     "are",     "as",       "at",      "be",      "because",
    "been",     "before",  "being",   "below",   "between",  "both",    "but",     "by",
    "can",      "could",   "did",     "do",      "does",     "doing",   "down",    "during",
    "each",     "few",     "for",     "from",    "further",  "had",     "has",     "have",
    "having",   "he",      "her",     "here",    "hers",     "herself", "him",     "himself",
    "his",      "how",     "i",       "if",      "in",       "into",    "is",      "it",
    "its",      "itself",  "just",    "me",      "more",     "most",    "my",      "myself",
    "no",       "nor",     "not",     "now",     "of",       "off",     "on",      "once",
    "only",     "or",      "other",   "ought",   "our",      "ours",    "ourselves", "out",
    "over",     "own",     "same",    "shall",   "she",      "should",  "so",      "some",
    "such",     "than",    "that",    "the",     "their",    "theirs",  "them",    "themselves",
    "then",     "there",   "these",   "they",    "this",     "those",   "through", "to",
    "too",      "under",   "until",   "up",      "very",     "was",     "we",      "were",
    "what",     "when",    "where",   "which",   "while",    "who",     "whom",    "why",
    "will",     "with",    "would",   "you",     "your",     "yours",   "yourself", "yourselves",
    "also",                "might",   "must",    "upon",     "via",     "yet",     "s",
    "t",        "d",       "ll",      "m",       "re",       "ve",      "don",     "doesn",
};

constexpr std::string_view kMonthNames[] = {"january", "february", "march",     "april",   "may",      "june",
                                            "july",    "august",   "september", "october", "november", "december"};

bool IsEnglish(const std::string& language) { return language == "english" || language == "en"; }

}  // namespace

std::string Term(std::string_view prefix, std::string_view value) {
  std::string t(prefix);
  if (value.size() <= kMaxTermValue) {
    t.append(value);
    return t;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  t.append(value.substr(0, kKeptValuePrefix));
  t.push_back('#');
  const uint64_t h = Fnv1a64(value);
  for (int shift = 60; shift >= 0; shift -= 4) t.push_back(kHex[(h >> shift) & 0xf]);
  return t;
}

std::string IdTerm(std::string_view id) { return Term(kPrefixId, id); }

std::string SessionKey(const Memory& m) {
  if (m.kind != Kind::kEpisode || m.ns.session.empty()) return {};
  return m.ns.ToString();
}

std::string EncodeTime(int64_t t) {
  const uint64_t u = static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[7 - i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

int64_t DecodeTime(const std::string& s) {
  if (s.size() != 8) return 0;
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(s[i]);
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

PassageSpan PassageOf(const Xapian::Document& doc) {
  const std::string value = doc.get_value(kSlotPassage);
  if (value.size() != 16) return {};
  return {DecodeTime(value.substr(0, 8)), DecodeTime(value.substr(8))};
}

std::unique_ptr<Xapian::SimpleStopper> MakeStopper(const std::string& language) {
  if (!IsEnglish(language)) return nullptr;
  auto stopper = std::make_unique<Xapian::SimpleStopper>();
  for (std::string_view w : kEnglishStopWords) stopper->add(std::string(w));
  return stopper;
}

std::optional<Xapian::Document> MakeDocument(const Memory& m, Xapian::TermGenerator& generator,
                                             const TextSpan* passage, bool date_terms) {
  Xapian::Document doc;
  doc.set_data(m.id);
  doc.add_boolean_term(IdTerm(m.id));
  doc.add_boolean_term(Term(kPrefixTenant, m.ns.tenant));
  // Empty namespace parts need no term: a query filters only on parts it sets.
  auto part = [&](std::string_view prefix, const std::string& v) {
    if (!v.empty()) doc.add_boolean_term(Term(prefix, v));
  };
  part(kPrefixUser, m.ns.user);
  part(kPrefixAgent, m.ns.agent);
  part(kPrefixSession, m.ns.session);
  part(kPrefixMission, m.ns.mission);
  part(kPrefixOperator, m.ns.operator_id);
  doc.add_boolean_term(Term(kPrefixKind, KindName(m.kind)));
  doc.add_boolean_term(Term(kPrefixLayer, LayerName(m.layer)));
  for (const std::string& tag : m.tags) doc.add_boolean_term(Term(kPrefixTag, tag));
  doc.add_boolean_term(Term(kPrefixSource, m.source));
  doc.add_boolean_term(Term(kPrefixCriticality, CriticalityName(m.criticality)));
  doc.add_boolean_term(Term(kPrefixState, RecordStateName(m.state)));
  if (m.access_level > 0) {
    doc.add_boolean_term(Term(kPrefixAccessLevel, std::to_string(m.access_level)));
  }
  doc.add_value(kSlotCreatedAt, EncodeTime(m.created_at));
  if (m.expires_at > 0) doc.add_value(kSlotExpiresAt, EncodeTime(m.expires_at));
  const std::string session = SessionKey(m);
  if (!session.empty()) {
    doc.add_boolean_term(Term(kPrefixSessionKey, session));
    doc.add_value(kSlotSession, session);
    doc.add_value(kSlotStep, EncodeTime(m.step_number));
  }
  const Xapian::termcount boolean_terms = doc.termlist_count();
  generator.set_document(doc);
  if (passage != nullptr) {
    doc.add_value(kSlotPassage, EncodeTime(static_cast<int64_t>(passage->begin)) +
                                    EncodeTime(static_cast<int64_t>(passage->end)));
    doc.add_value(kSlotRecord, m.id);
    generator.index_text_without_positions(
        Xapian::Utf8Iterator(m.text.data() + passage->begin, passage->end - passage->begin));
  } else {
    generator.index_text_without_positions(m.text);
  }
  if (doc.termlist_count() == boolean_terms) return std::nullopt;  // no word
  if (date_terms && m.created_at > 0) {
    using namespace std::chrono;
    const year_month_day date{floor<days>(sys_time<milliseconds>(milliseconds(m.created_at)))};
    doc.add_term("Z" + std::string(kMonthNames[static_cast<unsigned>(date.month()) - 1]));
    doc.add_term("Z" + std::to_string(static_cast<int>(date.year())));
  }
  return doc;
}

}  // namespace msp::xapian_lexical
