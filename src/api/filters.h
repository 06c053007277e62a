// The `filters` group of the operations that select records (internal to
// src/api): search and memory_list take the same filter fields with the
// same names, types and docs, read into a SearchFilter (msp/types.h).
#ifndef MSP_API_FILTERS_H_
#define MSP_API_FILTERS_H_

#include <string>
#include <vector>

#include "api/declare.h"

namespace msp::api {

// The rows of the `filters` group over R, whose SearchFilter `at` returns:
// [](R& r) -> auto& { return r.filter; }. `aliases`: give the lists the
// singular REST parameters memory_list took before it was declared (kind,
// layer, tag, source).
template <typename R, typename At>
std::vector<Field<R>> FilterFields(At at, bool aliases = false) {
  using F = Fields<R>;
  auto alias = [aliases](const char* name) { return aliases ? std::string(name) : std::string(); };
  return {
      F::Enums({.group = "filters", .name = "kinds", .doc = "Only these kinds.", .param_alias = alias("kind")},
               &ParseKind, &KindName, [at](R& r) -> auto& { return at(r).kinds; }),
      F::Enums({.group = "filters", .name = "layers", .doc = "Only these layers.", .param_alias = alias("layer")},
               &ParseLayer, &LayerName, [at](R& r) -> auto& { return at(r).layers; }),
      F::Strings({.group = "filters", .name = "tags", .doc = "Only records with any of these tags.",
                  .param_alias = alias("tag")},
                 [at](R& r) -> auto& { return at(r).tags; }),
      F::Strings({.group = "filters", .name = "sources", .doc = "Only records from these sources.",
                  .param_alias = alias("source")},
                 [at](R& r) -> auto& { return at(r).sources; }),
      F::Enums({.group = "filters", .name = "criticalities", .doc = "Only these criticalities."}, &ParseCriticality,
               &CriticalityName, [at](R& r) -> auto& { return at(r).criticalities; }),
      F::Time({.group = "filters", .name = "created_from", .doc = "Created at or after (ISO 8601)."},
              [at](R& r) -> auto& { return at(r).created_from; }),
      F::Time({.group = "filters", .name = "created_to", .doc = "Created before (ISO 8601)."},
              [at](R& r) -> auto& { return at(r).created_to; }),
      F::Bool({.group = "filters", .name = "include_superseded", .doc = "Also return superseded records."},
              [at](R& r) -> auto& { return at(r).include_superseded; }),
  };
}

// The filters' check across fields: the time range's order.
inline Status CheckFilter(const SearchFilter& f) {
  if (f.created_from != 0 && f.created_to != 0 && f.created_to <= f.created_from) {
    return Status::InvalidArgument("field 'filters.created_to' must be later than 'filters.created_from'");
  }
  return Status::Ok();
}

}  // namespace msp::api

#endif  // MSP_API_FILTERS_H_
