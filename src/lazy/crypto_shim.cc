// The libcrypto (OpenSSL) functions msp calls, loaded from libcrypto.so.3 on
// first use (lazy.h): SHA-256 of ingested documents (ingest/documents.cc)
// and of knowledge-graph keys (graph/graph_records.cc).
#include <openssl/evp.h>

#include "lazy/lazy.h"

namespace {

constexpr msp::lazy::LazyLibrary kLibcrypto{"libcrypto.so.3", "libssl3",
                                            "SHA-256 of documents and knowledge-graph keys (libcrypto)"};

}  // namespace

// clang-format off
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_Digest, (const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl), (data, count, md, size, type, impl))
MSP_LAZY_FUNCTION(kLibcrypto, const EVP_MD *, EVP_sha256, (void), ())
// clang-format on
