// Lazy shims for C libraries that only some verbs use (libgit2: the prompt
// store and `msp ingest git`; libcrypto: SHA-256 of documents and graph
// keys). msp links the shims instead of the libraries, so a process that
// never calls them starts without loading them and their dependencies (about
// 20 shared objects and 8 ms of dynamic linking for libgit2 alone).
//
// Each shim defines the library's functions msp calls, with the signatures of
// the library's own headers (a mismatch does not compile), as forwarders to
// the real function, which is looked up on the first call (dlopen by soname,
// then dlsym). When the library cannot be loaded, the first call prints what
// is missing and how to install it to standard error and exits with status 1:
// the functions have no way to report it, and today's alternative is a
// program that does not start at all.
//
// Adding a function: one line in the shim's list (git2_shim.cc,
// crypto_shim.cc) with the declaration copied from the library's header.
#ifndef MSP_LAZY_LAZY_H_
#define MSP_LAZY_LAZY_H_

namespace msp::lazy {

struct LazyLibrary {
  const char* soname;      // "libgit2.so.1.5"
  const char* package;     // the Debian package holding it: "libgit2-1.5"
  const char* needed_for;  // "git ingest and the prompt store"
};

// The address of `name` in `library`, loading the library on first use
// (thread-safe). Does not return when the library or the symbol is missing.
void* Symbol(const LazyLibrary& library, const char* name);

}  // namespace msp::lazy

// Defines `name` as a forwarder to the real function of LIBRARY (an
// msp::lazy::LazyLibrary in scope). `params` and `args` are parenthesised.
#define MSP_LAZY_FUNCTION(library, ret, name, params, args)                                        \
  extern "C" ret name params {                                                                       \
    static const auto real = reinterpret_cast<decltype(&name)>(::msp::lazy::Symbol(library, #name)); \
    return real args;                                                                                \
  }

#endif  // MSP_LAZY_LAZY_H_
