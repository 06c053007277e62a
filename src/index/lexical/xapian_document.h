// Internal to index/lexical/: the lexical index's Xapian documents (see
// xapian_index.cc for the index itself): their layout, the terms and
// values a record becomes, and the encodings the searches read back.
//
// Layout of one document (one record, or one passage of a long record; a
// record whose text holds no word to index has none, see MakeDocument):
//   data           the record id
//   "Q" id         the unique id term (replace / delete by term)
//   "X?:" value    boolean filter terms, one family per prefix below (the
//                  tenant, tags and source even when empty; the other
//                  namespace parts only when set)
//   value slot 0   created_at, 8-byte order-preserving encoding
//   value slot 1   expires_at, same encoding; only when expires_at > 0
//   value slot 2   episodes of a session: the session key (the episode's
//                  namespace, Namespace::ToString), also as term "XN:" key
//   value slot 3   episodes of a session: the step number, time encoding
//   "XV:" level    the access level, only when above 0 (so the common
//                  unrestricted case adds no term and costs no filter)
//   value slot 4   a record longer than RetrievalOptions::passage_bytes is
//                  several documents, one per passage (util/passages.h),
//                  each with the terms above and its own text terms: its
//                  byte offsets into the text, two times encoded as below
//   value slot 5   such a record's id, the collapse key: a search returns
//                  each record once, by its best passage
//   text terms     TermGenerator with the stemmer and stop words: "Z" +
//                  stem of every word that is not a stop word, no positions
//   date terms     with RetrievalOptions::date_terms, when created_at is
//                  set: "Z" + the English month name
//                  ("Zmarch") and "Z" + the year ("Z2023"), so questions that
//                  name a month or a year match what happened then
//   metadata       "last_seq": the change sequence the index reflects;
//                  "format": the document layout (kFormat, "+dates" with
//                  date terms); an index of another layout is emptied when
//                  opened and rebuilt by catch-up
//
// Stems only, no positions, stop words dropped (STEM_ALL_Z, STOP_ALL): that
// indexes about 2.4x faster than raw terms with positions plus stems
// (STEM_SOME) and keeps the index small. The query parser stems every word
// the same way (also capitalised ones: a sentence-initial capital is no sign
// of a proper noun in what agents ask). A quoted phrase therefore matches as
// the AND of its words.
//
// Stop words: the English list (xapian_document.cc) when the language is english, none
// otherwise.
//
// Times are encoded exactly (big-endian, sign bit flipped) rather than with
// sortable_serialise(), which rounds int64 through double.
#ifndef MSP_INDEX_LEXICAL_XAPIAN_DOCUMENT_H_
#define MSP_INDEX_LEXICAL_XAPIAN_DOCUMENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <xapian.h>

#include "msp/types.h"
#include "util/passages.h"

namespace msp::xapian_lexical {

inline constexpr Xapian::valueno kSlotCreatedAt = 0;
inline constexpr Xapian::valueno kSlotExpiresAt = 1;
inline constexpr Xapian::valueno kSlotSession = 2;
inline constexpr Xapian::valueno kSlotStep = 3;
inline constexpr char kLastSeqKey[] = "last_seq";
inline constexpr char kFormatKey[] = "format";
inline constexpr Xapian::valueno kSlotPassage = 4;
inline constexpr Xapian::valueno kSlotRecord = 5;
inline constexpr char kFormat[] = "5";  // 2: session key and step values; 3: access level terms; 4: passages;
                                        // 5: records without a word left out

// Boolean term prefixes. Every prefix ends in ':' so that no value can make
// one family's term look like another's.
inline constexpr std::string_view kPrefixId = "Q";
inline constexpr std::string_view kPrefixTenant = "XT:";
inline constexpr std::string_view kPrefixUser = "XU:";
inline constexpr std::string_view kPrefixAgent = "XA:";
inline constexpr std::string_view kPrefixSession = "XS:";
inline constexpr std::string_view kPrefixMission = "XM:";
inline constexpr std::string_view kPrefixOperator = "XO:";
inline constexpr std::string_view kPrefixKind = "XK:";
inline constexpr std::string_view kPrefixLayer = "XL:";
inline constexpr std::string_view kPrefixTag = "XG:";
inline constexpr std::string_view kPrefixSource = "XR:";
inline constexpr std::string_view kPrefixCriticality = "XC:";
inline constexpr std::string_view kPrefixState = "XE:";
inline constexpr std::string_view kPrefixSessionKey = "XN:";
inline constexpr std::string_view kPrefixAccessLevel = "XV:";

// The term of `value` in the family `prefix`; a value longer than Xapian
// allows keeps a prefix of itself and a hash of the whole.
std::string Term(std::string_view prefix, std::string_view value);
std::string IdTerm(std::string_view id);

// The session key of an episode of a session; empty for other records.
std::string SessionKey(const Memory& m);

// 8 bytes, big-endian, sign bit flipped: byte order equals int64 order.
std::string EncodeTime(int64_t t);
int64_t DecodeTime(const std::string& s);

// Where a passage document's text lies in its record's text, as the value
// kSlotPassage holds it (two EncodeTime values); {0, 0} for a document that
// is the whole record.
struct PassageSpan {
  int64_t begin = 0;
  int64_t end = 0;
};
PassageSpan PassageOf(const Xapian::Document& doc);

// The stop words of `language`: the English list for english, none otherwise.
std::unique_ptr<Xapian::SimpleStopper> MakeStopper(const std::string& language);

// The document of `m`, or of its `passage` when not null (see the layout);
// none when the text holds no word to index. Such a record (a retrieval
// log, an event without text) can match no query, and left out it
// cannot move the statistics every search reads: the document count, the
// mean length and the date terms' frequencies behind BM25 and the
// calibrated scores. So a search's scores depend on what is stored, not
// on the searches before it, whose logs are such records.
// The month and year terms are added only with `date_terms`.
std::optional<Xapian::Document> MakeDocument(const Memory& m, Xapian::TermGenerator& generator,
                                             const TextSpan* passage, bool date_terms);

}  // namespace msp::xapian_lexical

#endif  // MSP_INDEX_LEXICAL_XAPIAN_DOCUMENT_H_
