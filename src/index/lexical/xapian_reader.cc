// The lexical index's read handles (xapian_reader.h): the ids, passages and
// session positions of a search's documents, from the docid map in one
// batch or from each document, cached for the database's revision.
#include "index/lexical/xapian_reader.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <xapian.h>

namespace msp::xapian_lexical {
namespace {

void ReadPassage(const Xapian::Document& doc, Reader::CachedDoc& d) {
  const PassageSpan passage = PassageOf(doc);
  d.passage_begin = static_cast<size_t>(passage.begin);
  d.passage_end = static_cast<size_t>(passage.end);
}

}  // namespace

void MapIds(Reader& r, const Xapian::MSet& mset, bool any_passages) {
  if (!r.docid_map) return;
  r.lookup_docids.clear();
  for (auto it = mset.begin(); it != mset.end(); ++it) {
    if (!r.docs.contains(*it)) r.lookup_docids.push_back(*it);
  }
  if (r.lookup_docids.empty()) return;
  r.docid_map->Lookup(r.db.get_uuid(), r.db.get_lastdocid(), r.lookup_docids, r.lookup_ids);
  for (size_t i = 0; i < r.lookup_docids.size(); ++i) {
    DocidMapEntry& e = r.lookup_ids[i];
    if (e.id.empty()) continue;
    Reader::CachedDoc d;
    d.id = std::move(e.id);
    if (e.passage_known) {  // no document read
      d.passage_begin = e.passage_begin;
      d.passage_end = e.passage_end;
    } else if (any_passages) {  // a version 1 map
      ReadPassage(r.db.get_document(r.lookup_docids[i], Xapian::DOC_ASSUME_VALID), d);
    }
    r.docs.emplace(r.lookup_docids[i], std::move(d));
  }
}

const Reader::CachedDoc& ReadDoc(Reader& r, const Xapian::MSetIterator& it, bool with_position) {
  auto [at, inserted] = r.docs.try_emplace(*it);
  Reader::CachedDoc& d = at->second;
  if (!inserted && (d.position_read || !with_position)) return d;
  try {
    const Xapian::Document doc = r.db.get_document(*it, Xapian::DOC_ASSUME_VALID);
    if (inserted) {
      d.id = doc.get_data();
      ReadPassage(doc, d);
    }
    if (with_position) {
      d.position.session = doc.get_value(kSlotSession);
      if (!d.position.session.empty()) d.position.step = DecodeTime(doc.get_value(kSlotStep));
      d.position_read = true;
    }
  } catch (...) {
    r.docs.erase(at);  // never keep a half-read entry
    throw;
  }
  return d;
}

}  // namespace msp::xapian_lexical
