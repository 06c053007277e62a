// The libcrypto (OpenSSL) functions msp calls, loaded from libcrypto.so.3 on
// first use (lazy.h): SHA-256 of ingested documents (ingest/documents.cc)
// and of pulled model files (model/model_store.cc),
// and of knowledge-graph keys (graph/graph_records.cc), and AES-256-GCM of
// an encrypted store's pages (store/sqlite/encrypted_vfs.cc).
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "lazy/lazy.h"

namespace {

constexpr msp::lazy::LazyLibrary kLibcrypto{"libcrypto.so.3", "libssl3",
                                            "SHA-256 of documents and knowledge-graph keys, encryption at rest (libcrypto)"};

}  // namespace

// clang-format off
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_Digest, (const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl), (data, count, md, size, type, impl))
MSP_LAZY_FUNCTION(kLibcrypto, const EVP_MD *, EVP_sha256, (void), ())
MSP_LAZY_FUNCTION(kLibcrypto, EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())
MSP_LAZY_FUNCTION(kLibcrypto, void, EVP_MD_CTX_free, (EVP_MD_CTX *ctx), (ctx))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DigestInit_ex, (EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl), (ctx, type, impl))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DigestUpdate, (EVP_MD_CTX *ctx, const void *d, size_t cnt), (ctx, d, cnt))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DigestFinal_ex, (EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s), (ctx, md, s))
MSP_LAZY_FUNCTION(kLibcrypto, EVP_CIPHER_CTX *, EVP_CIPHER_CTX_new, (void), ())
MSP_LAZY_FUNCTION(kLibcrypto, void, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX *c), (c))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_CIPHER_CTX_ctrl, (EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr), (ctx, type, arg, ptr))
MSP_LAZY_FUNCTION(kLibcrypto, const EVP_CIPHER *, EVP_aes_256_gcm, (void), ())
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_EncryptInit_ex, (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv), (ctx, cipher, impl, key, iv))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_EncryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl), (ctx, out, outl, in, inl))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_EncryptFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl), (ctx, out, outl))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DecryptInit_ex, (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv), (ctx, cipher, impl, key, iv))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DecryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl), (ctx, out, outl, in, inl))
MSP_LAZY_FUNCTION(kLibcrypto, int, EVP_DecryptFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *outm, int *outl), (ctx, outm, outl))
MSP_LAZY_FUNCTION(kLibcrypto, unsigned char *, HMAC, (const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data, size_t data_len, unsigned char *md, unsigned int *md_len), (evp_md, key, key_len, data, data_len, md, md_len))
MSP_LAZY_FUNCTION(kLibcrypto, int, RAND_bytes, (unsigned char *buf, int num), (buf, num))
MSP_LAZY_FUNCTION(kLibcrypto, void, OPENSSL_cleanse, (void *ptr, size_t len), (ptr, len))
MSP_LAZY_FUNCTION(kLibcrypto, int, CRYPTO_memcmp, (const void *in_a, const void *in_b, size_t len), (in_a, in_b, len))
// clang-format on
