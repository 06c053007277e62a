// Fuzz target: the TOML configuration file (config/config.h, LoadConfig):
// the input is written to a file of this process and loaded as --config.
#include <unistd.h>

#include <fstream>
#include <string>

#include "config/config.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/msp-toml-fuzz-" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  msp::ConfigInput input;
  input.config_path = path;
  (void)msp::LoadConfig(input);
  return 0;
}
