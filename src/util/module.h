// Loading shared objects on first use, so that a process starts without the
// libraries only some verbs need (docs/install.md, "Modules").
//
// Two kinds:
//   - msp's own modules (libmsp_*.so, built by the project and installed in
//     <prefix>/lib/msp beside <prefix>/bin, or left beside the program in the
//     build tree): LoadModule finds one and returns its entry point.
//   - system libraries msp calls through a lazy shim (libgit2, libcrypto):
//     LoadSystemLibrary dlopens them by soname.
//
// Neither is ever unloaded. Both are thread-safe, but callers load a module
// once (std::call_once) and keep the result.
#ifndef MSP_UTIL_MODULE_H_
#define MSP_UTIL_MODULE_H_

#include <string>
#include <vector>

#include "msp/status.h"

namespace msp {

struct ModuleSpec {
  const char* file;         // "libmsp_postgres.so"
  const char* env;          // variable naming the file to load instead: "MSP_POSTGRES_MODULE"
  const char* build_path;   // where the build wrote it ("" when unknown)
  const char* entry;        // the one exported function: "msp_postgres_v1"
  const char* needed_for;   // what needs it, for the message: "the PostgreSQL store (store.backend = postgres)"
};

// The directories a module is looked for in, in order: $<env> (a file) first,
// then beside the running program, <program dir>/../lib/msp, then, when
// this code runs from a shared object (libmsp.so, docs/library.md), <its
// dir>/msp and its dir, and the build path.
std::vector<std::string> ModuleCandidates(const ModuleSpec& spec);

// The directory of the shared object this code was linked into (libmsp.so
// or, with MSP_SHARED_LIBS, libmsp_util.so); "" when it is the program.
std::string LibraryDirectory();

// dlopens the first candidate that exists and returns the address of its
// entry function. FailedPrecondition naming the file, every place looked at
// (and why each failed) and how to install it otherwise.
Result<void*> LoadModule(const ModuleSpec& spec);

// dlopens a system library by soname (RTLD_NOW | RTLD_GLOBAL, so that it is
// shared with any module that links it). FailedPrecondition naming the
// library, dlerror() and the Debian package that holds it otherwise.
Result<void*> LoadSystemLibrary(const char* soname, const char* package, const char* needed_for);

// The directory of the running program (from /proc/self/exe); "" if unknown.
std::string ProgramDirectory();

}  // namespace msp

#endif  // MSP_UTIL_MODULE_H_
