// Finding a data file msp reads at run time (a tokenizer vocabulary, a word
// vector table): the configured path, else the first of the usual places.
#ifndef MSP_UTIL_DATA_FILE_H_
#define MSP_UTIL_DATA_FILE_H_

#include <string>
#include <system_error>
#include <string_view>
#include <vector>

#include "msp/status.h"

namespace msp {

// What the error messages of FindDataFile say about the file.
struct DataFileSpec {
  std::string_view setting;         // the option that configures its path ("tokens.vocabulary_path")
  std::string_view what;            // what it is ("cl100k vocabulary")
  std::string_view expected;        // what a configured file should be; may be empty
  std::string_view how_to_install;  // ends the NotFound when no candidate exists
};

// `configured` when set (NotFound naming it when it is not a regular file),
// else the first of `candidates` that is a regular file, else NotFound
// listing every candidate and how to install the file.
Result<std::string> FindDataFile(const std::string& configured, const std::vector<std::string>& candidates,
                                 const DataFileSpec& spec);

// Files at rest: msp's data directories are created 0700 and its files 0600
// (docs/access.md, "Files at rest").
inline constexpr unsigned kPrivateDirMode = 0700;
inline constexpr unsigned kPrivateFileMode = 0600;

// Creates `dir` and its missing parents; the directories it creates are made
// kPrivateDirMode (an existing one is left as it is). Sets *ec on failure.
void CreatePrivateDirectories(const std::string& dir, std::error_code& ec);

// An empty `path` created with kPrivateFileMode unless it exists, so that a
// library that creates it later (SQLite, which gives its -wal and -shm files
// the database file's mode) keeps it private. Errors are left for the
// caller's open to report. True when it created the file.
bool PrecreatePrivateFile(const std::string& path);

// A warning when `path` (a secrets file: server.api_keys_file) can be read
// or written by its group or by others; empty when not (or when it cannot
// be inspected: opening it reports that).
std::string SecretsFileExposure(const std::string& path, std::string_view setting);

}  // namespace msp

#endif  // MSP_UTIL_DATA_FILE_H_
