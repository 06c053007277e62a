// Reading mission records under a clearance.
#include "mission/access.h"

#include <utility>

namespace msp {

Result<std::optional<Memory>> FindRecord(MemoryLayer& engine, const Namespace& scope, const std::string& id) {
  Result<Memory> m = engine.Get(scope, id);
  if (m.ok()) return std::optional<Memory>(std::move(m).value());
  if (m.status().IsNotFound()) return std::optional<Memory>();
  return m.status();
}

Result<Memory> GetVisible(MemoryLayer& engine, const Namespace& scope, const std::string& id, Kind kind,
                          std::optional<int> clearance, const std::string& what) {
  MSP_ASSIGN_OR_RETURN(std::optional<Memory> m, FindRecord(engine, scope, id));
  if (!m || m->kind != kind || (clearance && m->access_level > *clearance)) {
    std::string msg = "no " + what + " " + id + " in mission '" + scope.mission + "'";
    if (clearance) msg += " visible at clearance " + std::to_string(*clearance);
    return Status::NotFound(msg);
  }
  return std::move(*m);
}

Result<std::vector<Memory>> ListAll(MemoryLayer& engine, const Namespace& scope, Kind kind,
                                    std::optional<int> clearance, bool include_superseded, const std::string& tag) {
  ListRequest req;
  req.scope = scope;
  req.filter.kinds = {kind};
  req.filter.include_superseded = include_superseded;
  req.filter.max_access_level = clearance;
  if (!tag.empty()) req.filter.tags = {tag};
  req.limit = 0;
  MSP_ASSIGN_OR_RETURN(std::vector<Memory> out, engine.List(req));
  // The engine filters too; this keeps the rule local and visible.
  std::vector<Memory> kept;
  for (Memory& m : out) {
    if (m.kind != kind || (clearance && m.access_level > *clearance)) continue;
    kept.push_back(std::move(m));
  }
  return kept;
}

}  // namespace msp
