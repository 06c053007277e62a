// The lexical index's queries (xapian_query.h): the user's text parsed with
// the index's stemmer and stop words, restricted to what MatchesQuery lets
// the caller see, and the query match of the best hit.
#include "index/lexical/xapian_query.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <xapian.h>

#include "index/lexical/xapian_document.h"
#include "util/text.h"

namespace msp::xapian_lexical {

Xapian::Query ParseText(Reader& r, const std::string& text) {
  constexpr unsigned kFlags = Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_CJK_NGRAM;
  Xapian::Query query;
  try {
    query = r.parser.parse_query(text, kFlags);
  } catch (const Xapian::QueryParserError&) {
    std::string plain = text;
    for (char& c : plain) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = ' ';
    }
    try {
      query = r.parser.parse_query(plain, Xapian::QueryParser::FLAG_CJK_NGRAM);
    } catch (const Xapian::QueryParserError&) {
      return Xapian::Query();
    }
  }
  if (query.empty() || !r.stopper) return query;
  // QueryParser puts stop words back when the query has nothing else; we
  // want no hits then.
  for (auto t = query.get_unique_terms_begin(); t != query.get_unique_terms_end(); ++t) {
    const std::string term = *t;
    bool all_stop = true;
    bool any_word = false;
    for (auto w = r.parser.unstem_begin(term); w != r.parser.unstem_end(term); ++w) {
      any_word = true;
      if (!(*r.stopper)(AsciiLower(*w))) all_stop = false;
    }
    if (!any_word) all_stop = (*r.stopper)(term);
    if (!all_stop) return query;
  }
  return Xapian::Query();
}

Xapian::Query Restrict(const Xapian::Database& db, const Xapian::Query& text, const IndexQuery& q) {
  const Xapian::doccount docs = db.get_doccount();
  std::vector<Xapian::Query> must;
  auto term = [&](std::string_view prefix, std::string_view v) {
    std::string t = Term(prefix, v);
    if (db.get_termfreq(t) != docs) must.emplace_back(std::move(t));
  };
  const Namespace& s = q.scope;
  term(kPrefixTenant, s.tenant);  // the tenant always counts
  auto part = [&](std::string_view prefix, const std::string& v) {
    if (!v.empty()) term(prefix, v);
  };
  part(kPrefixUser, s.user);
  part(kPrefixAgent, s.agent);
  part(kPrefixSession, s.session);
  part(kPrefixMission, s.mission);
  part(kPrefixOperator, s.operator_id);

  auto any_of = [&](std::string_view prefix, const auto& values, auto name) {
    if (values.empty()) return;
    std::vector<Xapian::Query> alternatives;
    for (const auto& v : values) {
      std::string t = Term(prefix, name(v));
      if (db.get_termfreq(t) == docs) return;  // every document passes
      alternatives.emplace_back(std::move(t));
    }
    must.emplace_back(Xapian::Query::OP_OR, alternatives.begin(), alternatives.end());
  };
  const SearchFilter& f = q.filter;
  any_of(kPrefixKind, f.kinds, [](Kind k) { return KindName(k); });
  any_of(kPrefixLayer, f.layers, [](Layer l) { return LayerName(l); });
  any_of(kPrefixTag, f.tags, [](const std::string& t) { return std::string_view(t); });
  any_of(kPrefixSource, f.sources, [](const std::string& t) { return std::string_view(t); });
  any_of(kPrefixCriticality, f.criticalities, [](Criticality c) { return CriticalityName(c); });

  if (f.created_from != 0) {
    must.emplace_back(Xapian::Query::OP_VALUE_GE, kSlotCreatedAt, EncodeTime(f.created_from));
  }
  if (f.created_to != 0) {  // exclusive: created_at <= created_to - 1
    if (f.created_to == INT64_MIN) return Xapian::Query::MatchNothing;
    must.emplace_back(Xapian::Query::OP_VALUE_LE, kSlotCreatedAt, EncodeTime(f.created_to - 1));
  }

  Xapian::Query out = text;
  if (!must.empty()) {
    out = Xapian::Query(Xapian::Query::OP_FILTER, out,
                        Xapian::Query(Xapian::Query::OP_AND, must.begin(), must.end()));
  }
  // Exclusions, only those some document matches.
  std::vector<Xapian::Query> must_not;
  auto exclude = [&](std::string t) {
    if (db.get_termfreq(t) > 0) must_not.emplace_back(std::move(t));
  };
  // Expired: 0 < expires_at <= now (documents that never expire have no value).
  if (q.now > 0 && db.get_value_freq(kSlotExpiresAt) > 0) {
    must_not.emplace_back(Xapian::Query::OP_VALUE_LE, kSlotExpiresAt, EncodeTime(q.now));
  }
  if (!f.include_superseded) exclude(Term(kPrefixState, RecordStateName(RecordState::kSuperseded)));
  if (f.max_access_level) {
    for (int level = std::max(*f.max_access_level + 1, 1); level <= kMaxAccessLevel; ++level) {
      exclude(Term(kPrefixAccessLevel, std::to_string(level)));
    }
  }
  if (!must_not.empty()) {
    out = Xapian::Query(Xapian::Query::OP_AND_NOT, out,
                        Xapian::Query(Xapian::Query::OP_OR, must_not.begin(), must_not.end()));
  }
  return out;
}

double QueryMatch(const Xapian::Database& db, const Xapian::Enquire& enquire, const Xapian::MSet& mset,
                  const std::vector<std::string>& query_terms) {
  const double n = db.get_doccount();
  const std::vector<std::string> in_best(enquire.get_matching_terms_begin(mset.begin()),
                                         enquire.get_matching_terms_end(mset.begin()));
  double total = 0.0, matched = 0.0;
  for (const std::string& t : query_terms) {
    const double df = db.get_termfreq(t);
    const double weight = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    total += weight;
    if (std::find(in_best.begin(), in_best.end(), t) != in_best.end()) matched += weight;
  }
  return total > 0 ? matched / total : 0.0;
}

}  // namespace msp::xapian_lexical
