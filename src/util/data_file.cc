// Finding a data file at its configured path or a usual place, and keeping
// msp's own files private (see data_file.h).
#include "util/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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

void CreatePrivateDirectories(const std::string& dir, std::error_code& ec) {
  namespace fs = std::filesystem;
  ec.clear();
  // The missing ones, outermost first.
  std::vector<fs::path> missing;
  for (fs::path p = fs::path(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    std::error_code probe;
    if (fs::symlink_status(p, probe).type() != fs::file_type::not_found) break;
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) return;
  for (const fs::path& p : missing) {
    std::error_code chmod_ec;
    fs::permissions(p, static_cast<fs::perms>(kPrivateDirMode), fs::perm_options::replace, chmod_ec);
  }
}

bool PrecreatePrivateFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::string SecretsFileExposure(const std::string& path, std::string_view setting) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::string(setting) + " '" + path + "' can be read or written by its group or by others (mode " + mode +
         "): anyone who can read it can use its API keys. Make it private: chmod 600 " + path;
}

}  // namespace msp
