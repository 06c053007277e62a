// Encryption at rest for the SQLite store: the key, and an SQLite VFS that
// encrypts every page of the database file and of its WAL with AES-256-GCM.
//
// Why a VFS and not SQLCipher: Debian bookworm's SQLCipher (3.4.1) is built
// on SQLite 3.15, which lacks the UPSERT, RETURNING, window functions, JSON
// functions and STRICT tables msp's SQL uses (docs/encryption.md).
//
// On disk, page by page (P = the page size, R = kReserveBytes, which the
// store reserves at the end of every page when it creates the file, so the
// ciphertext is as long as the plaintext and the file keeps its layout):
//   bytes [0, P - R)      AES-256-GCM ciphertext of SQLite's page (for page 1
//                         only bytes [100, P - R): SQLite's 100-byte header
//                         stays readable, with its first 16 bytes replaced
//                         by kEncryptedMagic, so that msp recognises an
//                         encrypted store and SQLite alone refuses it)
//   bytes [P - R, P - R + 12)   the nonce (random, fresh for every write)
//   bytes [P - R + 12, P - 4)   the authentication tag
// The tag authenticates the page's offset in its file, so pages cannot be
// swapped. The WAL's own header and frame headers (page numbers, salts,
// checksums) stay readable; the frame's page is encrypted the same way. A
// page that fails its tag reads as SQLITE_IOERR_DATA, but for one case:
// while SQLite recovers the WAL (after a crash), a frame whose page fails
// its tag reads as zeros, which SQLite takes for the end of the log, as it
// does a frame failing its checksum: a writer killed in the middle of a
// frame's page write leaves such a frame after its last commit, and the
// store must open. Temporary files are
// kept in memory by the store (temp_store = MEMORY); a rollback journal is
// never written (the store uses WAL) and a page image written to one is
// refused.
//
// Thread-safety: the VFS is registered once per key and process and lives
// until the process ends; each open file is used by one connection.
#ifndef MSP_STORE_SQLITE_ENCRYPTED_VFS_H_
#define MSP_STORE_SQLITE_ENCRYPTED_VFS_H_

#include <array>
#include <optional>
#include <string>

#include "msp/options.h"
#include "msp/status.h"

namespace msp {

// Bytes reserved at the end of each page: nonce (12), tag (16), unused (4).
inline constexpr int kReserveBytes = 32;
// The first 16 bytes of an encrypted store's file, in place of SQLite's
// "SQLite format 3\0".
inline constexpr char kEncryptedMagic[] = "msp encrypted 1";  // 15 chars and the NUL

// A 256-bit key. Its bytes are wiped when it goes away.
class StoreKey {
 public:
  explicit StoreKey(const std::array<unsigned char, 32>& bytes) : bytes_(bytes) {}
  StoreKey(const StoreKey&) = default;
  StoreKey& operator=(const StoreKey&) = default;
  ~StoreKey();
  const std::array<unsigned char, 32>& bytes() const { return bytes_; }

 private:
  std::array<unsigned char, 32> bytes_;
};

// True when `options` turn encryption at rest on (a key file or a key is set).
bool EncryptionConfigured(const StoreOptions& options);

// The key `options` name: the file store.encryption_key_file (which must
// not be readable or writable by group or others) or the value of
// store.encryption_key ($MSP_ENCRYPTION_KEY), each 64 hexadecimal digits
// (surrounding white space ignored). Nullopt when neither is set;
// InvalidArgument when both are, or the key is malformed (the message never
// shows the key).
Result<std::optional<StoreKey>> LoadStoreKey(const StoreOptions& options);

// Checks the database file at `path` before SQLite opens it, so that a
// mistake changes nothing: with a key, the file must be missing, empty or
// an encrypted store whose first page that key decrypts; without one, it
// must not be an encrypted store. Each failure says what to do.
Status CheckStoreFile(const std::string& path, const std::optional<StoreKey>& key);

// The name of the SQLite VFS that encrypts with `key` (registered on the
// first call for that key).
Result<std::string> EncryptedVfsName(const StoreKey& key);

}  // namespace msp

#endif  // MSP_STORE_SQLITE_ENCRYPTED_VFS_H_
