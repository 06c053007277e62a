// Internal to index/lexical/: a search's Xapian query, from the user's text
// and the visibility rules of MatchesQuery, and how much of it the best
// hit matched.
#ifndef MSP_INDEX_LEXICAL_XAPIAN_QUERY_H_
#define MSP_INDEX_LEXICAL_XAPIAN_QUERY_H_

#include <string>
#include <vector>

#include <xapian.h>

#include "index/index.h"
#include "index/lexical/xapian_reader.h"

namespace msp::xapian_lexical {

// The user's text as a query. Never fails: on a syntax error the text is
// stripped of punctuation and parsed as plain words. Returns an empty query
// when nothing but stop words (or nothing at all) is left.
Xapian::Query ParseText(Reader& r, const std::string& text);

// `text` restricted to what MatchesQuery lets `q` see. Filters that every
// document passes are left out (a term every document holds, such as the
// one tenant or user of a single-user index; no expiring or superseded
// records), so the common case costs nothing over the text query: a filter
// term held by all 10,000 documents cost about 0.14 M instructions a search.
// Expired and superseded records are cut with AND_NOT over short lists: only
// expiring documents have a value in the expiry slot.
Xapian::Query Restrict(const Xapian::Database& db, const Xapian::Query& text, const IndexQuery& q);

// LexicalHit::query_match of the best hit of `mset`: the share of the
// query terms' idf that it holds.
double QueryMatch(const Xapian::Database& db, const Xapian::Enquire& enquire, const Xapian::MSet& mset,
                  const std::vector<std::string>& query_terms);

}  // namespace msp::xapian_lexical

#endif  // MSP_INDEX_LEXICAL_XAPIAN_QUERY_H_
