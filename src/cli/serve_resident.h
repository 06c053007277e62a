// The server side of the resident path (src/local; docs/cli.md, "The
// resident path"): `msp serve` answers the calls msp commands on its data
// directory send to <data_dir>/msp.sock with src/api's read-only
// operations on its engine, as the caller the command describes (its
// tenant, actor and clearance, by the command line's own rule, CallerOf).
// Part of the serve module.
#ifndef MSP_CLI_SERVE_RESIDENT_H_
#define MSP_CLI_SERVE_RESIDENT_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "msp/digest.h"
#include "msp/memory.h"
#include "config/settings.h"

namespace msp {

class ResidentCalls {
 public:
  // `engine` must outlive this object.
  ResidentCalls(MemoryLayer& engine, const Settings& options);

  // One call's answer frame: {"answer": ...}, {"error": {code, message}},
  // or {"declined": why} when the command should answer itself (its
  // settings differ from the server's). Thread-safe.
  nlohmann::json Answer(const nlohmann::json& call) const;

 private:
  MemoryLayer& engine_;
  std::string settings_;  // AnswerSettingsDigest of the server's options
  std::vector<std::string> trusted_sources_;
  // The mission interface (events, reports) with the server's mission and
  // tokens settings, which the digest covers; or why it is unavailable.
  // Opened on first use.
  Result<const WorkflowMemory*> Workflow() const;
  Options options_;
  mutable std::once_flag workflow_opened_;
  mutable std::unique_ptr<WorkflowMemory> workflow_;
  mutable Status workflow_status_;
};

}  // namespace msp

#endif  // MSP_CLI_SERVE_RESIDENT_H_
