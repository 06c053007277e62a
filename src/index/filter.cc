// MatchesQuery: the one definition of which records a query may see.
#include <algorithm>

#include "index/index.h"

namespace msp {
namespace {

// True when `allowed` is empty (any) or holds `v`.
template <typename T>
bool AnyOf(const std::vector<T>& allowed, const T& v) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

}  // namespace

bool MatchesQuery(const Memory& r, const IndexQuery& q) {
  if (!q.scope.Contains(r.ns)) return false;
  const SearchFilter& f = q.filter;
  if (!AnyOf(f.kinds, r.kind) || !AnyOf(f.layers, r.layer) || !AnyOf(f.sources, r.source) ||
      !AnyOf(f.criticalities, r.criticality)) {
    return false;
  }
  if (!f.tags.empty()) {
    const bool any_tag = std::any_of(r.tags.begin(), r.tags.end(), [&](const std::string& t) {
      return std::find(f.tags.begin(), f.tags.end(), t) != f.tags.end();
    });
    if (!any_tag) return false;
  }
  if (f.created_from != 0 && r.created_at < f.created_from) return false;
  if (f.created_to != 0 && r.created_at >= f.created_to) return false;
  if (r.expires_at > 0 && r.expires_at <= q.now) return false;
  if (!f.include_superseded && r.state == RecordState::kSuperseded) return false;
  if (f.max_access_level && r.access_level > *f.max_access_level) return false;
  return true;
}

}  // namespace msp
