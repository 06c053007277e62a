// Finding a data file at its configured path or a usual place (see data_file.h).
#include "util/data_file.h"

#include <filesystem>
#include <system_error>

namespace msp {

Result<std::string> FindDataFile(const std::string& configured, const std::vector<std::string>& candidates,
                                 const DataFileSpec& spec) {
  std::error_code ec;
  if (!configured.empty()) {
    if (std::filesystem::is_regular_file(configured, ec)) return configured;
    std::string message = std::string(spec.setting) + " " + configured + " does not exist";
    if (!spec.expected.empty()) message += " (it should be " + std::string(spec.expected) + ")";
    return Status::NotFound(message);
  }
  for (const std::string& c : candidates) {
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  std::string where;
  for (const std::string& c : candidates) where += (where.empty() ? "" : ", ") + c;
  return Status::NotFound("no " + std::string(spec.what) + " found (looked at " + where + "); " +
                          std::string(spec.how_to_install));
}

}  // namespace msp
