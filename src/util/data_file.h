// Finding a data file msp reads at run time (a tokenizer vocabulary, a word
// vector table): the configured path, else the first of the usual places.
#ifndef MSP_UTIL_DATA_FILE_H_
#define MSP_UTIL_DATA_FILE_H_

#include <string>
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

}  // namespace msp

#endif  // MSP_UTIL_DATA_FILE_H_
