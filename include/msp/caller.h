// Caller: who makes a call (tenant, actor, clearance), and the memory layer
// that makes every call as that caller and enforces its access rule.
//
// Every face builds one Caller per request and calls through AsCaller():
//   command line  --tenant, actor --operator (else options.actor, else
//                 "cli"); clearance --clearance N, else --operator's in the
//                 registry (msp/mission.h), else none: the owner of the data
//                 directory, who can read the store file anyway
//   REST, MCP     the API key's tenant and clearance; actor options.actor,
//                 else "rest" / "mcp"
// so the same caller gets the same answer from every face.
#ifndef MSP_CALLER_H_
#define MSP_CALLER_H_

#include <memory>
#include <optional>
#include <string>

#include "msp/memory.h"

namespace msp {

struct Caller {
  std::string tenant = "default";
  // Who acts, for the audit log, procedure versions and mission records.
  // When set it replaces the actor a request names; empty: the request's,
  // else options.actor.
  std::string actor;
  // 0..kMaxAccessLevel: only records whose access_level is at most this
  // exist for the caller. nullopt: no limit (the data's owner, a key
  // without a clearance).
  std::optional<int> clearance;
};

// A MemoryLayer through which every call of `engine` is made as `caller`.
// `engine` must outlive it. Thread-safe as `engine` is. The rule:
//  - Tenant: a scope, request namespace or record of another tenant is
//    InvalidArgument naming both tenants; nothing is read or changed.
//  - Clearance: a record above it does not exist for the caller. Get,
//    History, Delete, SupersedeFact and a Commit that replaces or deletes
//    it are NotFound with the message a missing record gets; Retrieve,
//    List, LastSteps, History, ChangesSince (as `gone`), Export and GetStats
//    leave such records out (GetStats also reports no audit_events). A
//    Commit putting a record above it is Forbidden (the caller could not
//    read it back); Audit and Import (which may replace any record by id)
//    are Forbidden to a caller with a clearance.
//  - Actor: caller.actor, when set, is the actor of every write.
// A clearance outside 0..kMaxAccessLevel makes every call InvalidArgument.
std::unique_ptr<MemoryLayer> AsCaller(MemoryLayer& engine, Caller caller);
// The same, owning `engine`.
std::unique_ptr<MemoryLayer> AsCaller(std::unique_ptr<MemoryLayer> engine, Caller caller);

}  // namespace msp

#endif  // MSP_CALLER_H_
