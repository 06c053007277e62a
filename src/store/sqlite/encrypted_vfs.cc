// The encrypting SQLite VFS and the store key (encrypted_vfs.h).
#include "store/sqlite/encrypted_vfs.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "store/sqlite/vfs_shim.h"
#include "util/owned_fd.h"

namespace msp {
namespace {

constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;
constexpr int kSqliteHeaderBytes = 100;
constexpr int kWalHeaderBytes = 32;
constexpr int kWalFrameHeaderBytes = 24;
// The shared-memory lock SQLite holds exclusively while it rebuilds the
// WAL index from the WAL (its recovery; lock slot 2 of the WAL-index
// format, https://sqlite.org/walformat.html).
constexpr int kWalRecoverLock = 2;
constexpr char kSqliteMagic[] = "SQLite format 3";  // 15 chars and the NUL
static_assert(sizeof(kEncryptedMagic) == 16 && sizeof(kSqliteMagic) == 16);
static_assert(kNonceBytes + kTagBytes <= kReserveBytes);

// What the tag binds a page to besides its offset.
enum class FileKind : unsigned char { kPass = 0, kMainDb = 1, kWal = 2, kJournal = 3 };

bool IsPageSize(int64_t n) { return n >= 512 && n <= 65536 && (n & (n - 1)) == 0; }

// The page key: HMAC-SHA-256 of a fixed label under the store key (one
// HKDF-Expand block), so the key the user holds never encrypts directly.
std::array<unsigned char, 32> PageKey(const StoreKey& key) {
  static constexpr unsigned char kLabel[] = "msp sqlite page key v1\x01";
  std::array<unsigned char, 32> out{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.bytes().data(), static_cast<int>(key.bytes().size()), kLabel, sizeof(kLabel) - 1, out.data(),
       &size);
  return out;
}

// AES-256-GCM over one page in place. Not thread-safe (one per file).
class PageCipher {
 public:
  explicit PageCipher(const std::array<unsigned char, 32>& key) : key_(key), ctx_(EVP_CIPHER_CTX_new()) {}
  ~PageCipher() {
    if (ctx_ != nullptr) EVP_CIPHER_CTX_free(ctx_);
  }
  PageCipher(const PageCipher&) = delete;
  PageCipher& operator=(const PageCipher&) = delete;

  // Encrypts page bytes [begin, size - kReserveBytes) of `page`, writing
  // the nonce and tag into its reserved tail. False on a library failure.
  bool Seal(unsigned char* page, int size, int begin, FileKind kind, int64_t offset) {
    unsigned char* nonce = page + size - kReserveBytes;
    unsigned char* tag = nonce + kNonceBytes;
    if (ctx_ == nullptr || RAND_bytes(nonce, kNonceBytes) != 1) return false;
    std::memset(tag + kTagBytes, 0, kReserveBytes - kNonceBytes - kTagBytes);
    const std::array<unsigned char, 9> aad = AadBytes(kind, offset);
    int n = 0;
    if (EVP_EncryptInit_ex(ctx_, EVP_aes_256_gcm(), nullptr, key_.data(), nonce) != 1 ||
        EVP_EncryptUpdate(ctx_, nullptr, &n, aad.data(), static_cast<int>(aad.size())) != 1 ||
        EVP_EncryptUpdate(ctx_, page + begin, &n, page + begin, size - kReserveBytes - begin) != 1 ||
        EVP_EncryptFinal_ex(ctx_, page + size - kReserveBytes, &n) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag) != 1) {
      return false;
    }
    return true;
  }

  // Decrypts what Seal wrote, zeroing the reserved tail (as SQLite left
  // it). A page of zeros (never written: a file grown by truncation) reads
  // as zeros. False when the tag does not match (wrong key, damage).
  bool Open(unsigned char* page, int size, int begin, FileKind kind, int64_t offset) {
    unsigned char* nonce = page + size - kReserveBytes;
    unsigned char* tag = nonce + kNonceBytes;
    bool all_zero = true;
    for (int i = begin; i < size && all_zero; ++i) all_zero = page[i] == 0;
    if (all_zero) return true;
    const std::array<unsigned char, 9> aad = AadBytes(kind, offset);
    int n = 0;
    unsigned char scratch[16];
    const bool ok = ctx_ != nullptr &&
                    EVP_DecryptInit_ex(ctx_, EVP_aes_256_gcm(), nullptr, key_.data(), nonce) == 1 &&
                    EVP_DecryptUpdate(ctx_, nullptr, &n, aad.data(), static_cast<int>(aad.size())) == 1 &&
                    EVP_DecryptUpdate(ctx_, page + begin, &n, page + begin, size - kReserveBytes - begin) == 1 &&
                    EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, kTagBytes, tag) == 1 &&
                    EVP_DecryptFinal_ex(ctx_, scratch, &n) == 1;
    std::memset(nonce, 0, kReserveBytes);
    return ok;
  }

 private:
  // The associated data the tag covers: the file kind and the page's offset.
  static std::array<unsigned char, 9> AadBytes(FileKind kind, int64_t offset) {
    std::array<unsigned char, 9> a{};
    a[0] = static_cast<unsigned char>(kind);
    for (int i = 0; i < 8; ++i) a[1 + i] = static_cast<unsigned char>(static_cast<uint64_t>(offset) >> (8 * i));
    return a;
  }

  std::array<unsigned char, 32> key_;
  EVP_CIPHER_CTX* ctx_;
};

// ---- the VFS ----

struct CipherVfs : ShimVfs {
  std::array<unsigned char, 32> page_key;
};

struct CipherFile {
  sqlite3_file file;  // first: SQLite sees a CipherFile as a sqlite3_file
  sqlite3_file* real;  // the base VFS's file, allocated right after this struct
  FileKind kind;
  int wal_page_size;  // 0 until known
  // The main database file: the shared-memory lock slots this connection
  // holds exclusively (bit i: slot i), as SQLite takes them through it.
  unsigned shm_exclusive;
  // The WAL: its connection's main database file (opened before the WAL
  // and closed after it), whose locks tell when SQLite is recovering.
  CipherFile* db;
  PageCipher* cipher;
  std::vector<unsigned char>* scratch;
};

// The base file follows at an 8-byte boundary, as SQLite aligns its files.
static_assert(sizeof(CipherFile) % 8 == 0);
CipherFile* Cast(sqlite3_file* f) { return reinterpret_cast<CipherFile*>(f); }

// True while SQLite recovers the WAL of `wal`'s connection: it then reads
// every frame, header and page in one read, up to the end of the file, and
// takes the first one whose salts or checksum do not match for the end of
// the log.
bool Recovering(const CipherFile* wal) {
  return wal->db != nullptr && (wal->db->shm_exclusive & (1u << kWalRecoverLock)) != 0;
}

// The page size of a WAL, from its header (read once).
int WalPageSize(CipherFile* f) {
  if (f->wal_page_size != 0) return f->wal_page_size;
  unsigned char header[kWalHeaderBytes];
  if (f->real->pMethods->xRead(f->real, header, kWalHeaderBytes, 0) != SQLITE_OK) return 0;
  const int64_t size = (int64_t{header[8]} << 24) | (header[9] << 16) | (header[10] << 8) | header[11];
  if (IsPageSize(size)) f->wal_page_size = static_cast<int>(size);
  return f->wal_page_size;
}

void NoteWalHeader(CipherFile* f, const unsigned char* data, int amount, sqlite3_int64 offset) {
  if (offset != 0 || amount < kWalHeaderBytes) return;
  const int64_t size = (int64_t{data[8]} << 24) | (data[9] << 16) | (data[10] << 8) | data[11];
  if (IsPageSize(size)) f->wal_page_size = static_cast<int>(size);
}

// Calls fn(region_offset) for each WAL frame's page region [r, r + P) that
// meets [offset, offset + amount).
template <typename Fn>
int ForEachWalPage(int page_size, int amount, sqlite3_int64 offset, Fn fn) {
  const int64_t frame = page_size + kWalFrameHeaderBytes;
  int64_t k = offset < kWalHeaderBytes ? 0 : (offset - kWalHeaderBytes) / frame;
  for (;; ++k) {
    const int64_t region = kWalHeaderBytes + k * frame + kWalFrameHeaderBytes;
    if (region >= offset + amount) break;
    if (region + page_size <= offset) continue;
    const int rc = fn(region);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

int CipherClose(sqlite3_file* file) {
  CipherFile* f = Cast(file);
  const int rc = f->real->pMethods != nullptr ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  delete f->cipher;
  delete f->scratch;
  f->cipher = nullptr;
  f->scratch = nullptr;
  return rc;
}

int CipherRead(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  CipherFile* f = Cast(file);
  const int rc = f->real->pMethods->xRead(f->real, buffer, amount, offset);
  if (f->kind == FileKind::kPass || f->kind == FileKind::kJournal || rc != SQLITE_OK) return rc;
  auto* data = static_cast<unsigned char*>(buffer);
  if (f->kind == FileKind::kMainDb) {
    if (offset < static_cast<sqlite3_int64>(sizeof(kSqliteMagic))) {
      // Show SQLite its own magic where the file has msp's.
      for (sqlite3_int64 i = offset; i < offset + amount && i < static_cast<sqlite3_int64>(sizeof(kSqliteMagic)); ++i) {
        data[i - offset] = static_cast<unsigned char>(kSqliteMagic[i]);
      }
    }
    if (offset + amount <= kSqliteHeaderBytes) return SQLITE_OK;  // the readable header
    if (!IsPageSize(amount) || offset % amount != 0) return SQLITE_IOERR_READ;
    const int begin = offset == 0 ? kSqliteHeaderBytes : 0;
    return f->cipher->Open(data, amount, begin, FileKind::kMainDb, offset) ? SQLITE_OK : SQLITE_IOERR_DATA;
  }
  // The WAL.
  NoteWalHeader(f, data, amount, offset);
  const int page_size = WalPageSize(f);
  if (page_size == 0) return offset + amount <= kWalHeaderBytes ? SQLITE_OK : SQLITE_IOERR_READ;
  return ForEachWalPage(page_size, amount, offset, [&](int64_t region) {
    if (region >= offset && region + page_size <= offset + amount) {
      if (f->cipher->Open(data + (region - offset), page_size, 0, FileKind::kWal, region)) return SQLITE_OK;
      // A kill -9 can cut a frame's page write short (the kernel stops a
      // write between memory pages for a fatal signal), leaving the frame
      // after the last commit with a page that fails its tag. In recovery
      // such a frame is shown to SQLite as zeros, header included: page
      // number 0 is never a valid frame, so the log ends before it, as it
      // would at a frame failing SQLite's own checksum. Its plaintext is
      // never used. Outside recovery a page that fails its tag is damage.
      const int64_t frame = region - kWalFrameHeaderBytes;
      if (frame >= offset && Recovering(f)) {
        std::memset(data + (frame - offset), 0, static_cast<size_t>(kWalFrameHeaderBytes + page_size));
        return SQLITE_OK;
      }
      return SQLITE_IOERR_DATA;
    }
    // Part of a page: read it whole, decrypt, copy the part asked for.
    std::vector<unsigned char> page(static_cast<size_t>(page_size));
    const int read = f->real->pMethods->xRead(f->real, page.data(), page_size, region);
    if (read != SQLITE_OK) return read;
    if (!f->cipher->Open(page.data(), page_size, 0, FileKind::kWal, region)) return SQLITE_IOERR_DATA;
    const int64_t lo = std::max<int64_t>(region, offset);
    const int64_t hi = std::min<int64_t>(region + page_size, offset + amount);
    std::memcpy(data + (lo - offset), page.data() + (lo - region), static_cast<size_t>(hi - lo));
    return SQLITE_OK;
  });
}

// True when SQLite left the page's reserved tail zero (it always does:
// pages it reads back from this VFS have it zeroed). The WAL's checksums
// cover it, so a tail the VFS could not give back must not be written.
bool TailIsZero(const unsigned char* page, int size) {
  for (int i = size - kReserveBytes; i < size; ++i) {
    if (page[i] != 0) return false;
  }
  return true;
}

int CipherWrite(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  CipherFile* f = Cast(file);
  const auto* in = static_cast<const unsigned char*>(buffer);
  if (f->kind == FileKind::kPass) return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
  if (f->kind == FileKind::kJournal) {
    // A rollback journal would hold page images in the clear: each is
    // written on its own, 4 bytes after its page number (so at an offset
    // of 4 modulo 8, where the journal's sector-aligned headers never are).
    if (IsPageSize(amount) && offset % 8 == 4) return SQLITE_IOERR_WRITE;
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
  }
  std::vector<unsigned char>& out = *f->scratch;
  out.assign(in, in + amount);
  if (f->kind == FileKind::kMainDb) {
    for (sqlite3_int64 i = offset; i < offset + amount && i < static_cast<sqlite3_int64>(sizeof(kEncryptedMagic)); ++i) {
      out[static_cast<size_t>(i - offset)] = static_cast<unsigned char>(kEncryptedMagic[i]);
    }
    if (offset + amount > kSqliteHeaderBytes) {
      if (!IsPageSize(amount) || offset % amount != 0 || !TailIsZero(in, amount)) return SQLITE_IOERR_WRITE;
      // Page 1 must say that the pages reserve room for the nonce and tag.
      if (offset == 0 && in[20] != kReserveBytes) return SQLITE_IOERR_WRITE;
      const int begin = offset == 0 ? kSqliteHeaderBytes : 0;
      if (!f->cipher->Seal(out.data(), amount, begin, FileKind::kMainDb, offset)) return SQLITE_IOERR_WRITE;
    }
    return f->real->pMethods->xWrite(f->real, out.data(), amount, offset);
  }
  // The WAL: every page region the write meets must be whole in it.
  NoteWalHeader(f, in, amount, offset);
  const int page_size = WalPageSize(f);
  if (page_size == 0) {
    if (offset + amount > kWalHeaderBytes) return SQLITE_IOERR_WRITE;
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
  }
  const int rc = ForEachWalPage(page_size, amount, offset, [&](int64_t region) {
    if (region < offset || region + page_size > offset + amount) return SQLITE_IOERR_WRITE;
    unsigned char* page = out.data() + (region - offset);
    if (!TailIsZero(page, page_size)) return SQLITE_IOERR_WRITE;
    return f->cipher->Seal(page, page_size, 0, FileKind::kWal, region) ? SQLITE_OK : SQLITE_IOERR_WRITE;
  });
  if (rc != SQLITE_OK) return rc;
  return f->real->pMethods->xWrite(f->real, out.data(), amount, offset);
}

// The rest forward to the base VFS's file.
int CipherTruncate(sqlite3_file* f, sqlite3_int64 size) { return Cast(f)->real->pMethods->xTruncate(Cast(f)->real, size); }
int CipherSync(sqlite3_file* f, int flags) { return Cast(f)->real->pMethods->xSync(Cast(f)->real, flags); }
int CipherFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Cast(f)->real->pMethods->xFileSize(Cast(f)->real, size);
}
int CipherLock(sqlite3_file* f, int lock) { return Cast(f)->real->pMethods->xLock(Cast(f)->real, lock); }
int CipherUnlock(sqlite3_file* f, int lock) { return Cast(f)->real->pMethods->xUnlock(Cast(f)->real, lock); }
int CipherCheckReservedLock(sqlite3_file* f, int* out) {
  return Cast(f)->real->pMethods->xCheckReservedLock(Cast(f)->real, out);
}
int CipherFileControl(sqlite3_file* f, int op, void* arg) {
  return Cast(f)->real->pMethods->xFileControl(Cast(f)->real, op, arg);
}
int CipherSectorSize(sqlite3_file* f) { return Cast(f)->real->pMethods->xSectorSize(Cast(f)->real); }
int CipherDeviceCharacteristics(sqlite3_file* f) {
  return Cast(f)->real->pMethods->xDeviceCharacteristics(Cast(f)->real);
}
int CipherShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Cast(f)->real->pMethods->xShmMap(Cast(f)->real, region, size, extend, out);
}
int CipherShmLock(sqlite3_file* file, int offset, int n, int flags) {
  CipherFile* f = Cast(file);
  const int rc = f->real->pMethods->xShmLock(f->real, offset, n, flags);
  if (rc == SQLITE_OK && (flags & SQLITE_SHM_EXCLUSIVE) != 0 && offset >= 0 && n > 0 &&
      offset + n <= SQLITE_SHM_NLOCK) {
    const unsigned bits = ((1u << n) - 1) << offset;
    if ((flags & SQLITE_SHM_LOCK) != 0) {
      f->shm_exclusive |= bits;
    } else {
      f->shm_exclusive &= ~bits;
    }
  }
  return rc;
}
void CipherShmBarrier(sqlite3_file* f) { Cast(f)->real->pMethods->xShmBarrier(Cast(f)->real); }
int CipherShmUnmap(sqlite3_file* f, int delete_flag) {
  return Cast(f)->real->pMethods->xShmUnmap(Cast(f)->real, delete_flag);
}

// Version 2: shared memory for the WAL, but no xFetch, so SQLite never
// reads pages through a memory map of the (encrypted) file.
const sqlite3_io_methods kCipherMethods = {
    2,
    CipherClose,
    CipherRead,
    CipherWrite,
    CipherTruncate,
    CipherSync,
    CipherFileSize,
    CipherLock,
    CipherUnlock,
    CipherCheckReservedLock,
    CipherFileControl,
    CipherSectorSize,
    CipherDeviceCharacteristics,
    CipherShmMap,
    CipherShmLock,
    CipherShmBarrier,
    CipherShmUnmap,
    nullptr,
    nullptr,
};

CipherVfs* VfsOf(sqlite3_vfs* vfs) { return static_cast<CipherVfs*>(ShimOf(vfs)); }

int CipherOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  CipherVfs* self = VfsOf(vfs);
  CipherFile* f = Cast(file);
  std::memset(f, 0, sizeof(CipherFile));
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  const int rc = self->base->xOpen(self->base, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) return rc;  // pMethods stays null: SQLite does not close it
  if (flags & SQLITE_OPEN_MAIN_DB) {
    f->kind = FileKind::kMainDb;
  } else if (flags & SQLITE_OPEN_WAL) {
    f->kind = FileKind::kWal;
    sqlite3_file* db = sqlite3_database_file_object(name);
    if (db != nullptr && db->pMethods == &kCipherMethods) f->db = Cast(db);
  } else if (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL)) {
    f->kind = FileKind::kJournal;
  } else {
    f->kind = FileKind::kPass;
  }
  f->cipher = new PageCipher(self->page_key);
  f->scratch = new std::vector<unsigned char>();
  f->file.pMethods = &kCipherMethods;
  return SQLITE_OK;
}

// ---- the key ----

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return std::string();
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

Result<StoreKey> ParseKey(const std::string& text, const std::string& where) {
  const std::string hex = Trim(text);
  std::array<unsigned char, 32> bytes{};
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bool ok = hex.size() == 64;
  for (size_t i = 0; ok && i < 32; ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    bytes[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  if (!ok) {
    OPENSSL_cleanse(bytes.data(), bytes.size());
    return Status::InvalidArgument("the encryption key " + where + " is not 64 hexadecimal digits (it has " +
                                   std::to_string(hex.size()) +
                                   " characters); make one with: openssl rand -hex 32");
  }
  StoreKey key(bytes);
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return key;
}

}  // namespace

StoreKey::~StoreKey() { OPENSSL_cleanse(bytes_.data(), bytes_.size()); }

bool EncryptionConfigured(const StoreOptions& options) {
  return !options.encryption_key_file.empty() || !options.encryption_key.empty();
}

Result<std::optional<StoreKey>> LoadStoreKey(const StoreOptions& options) {
  if (!options.encryption_key_file.empty() && !options.encryption_key.empty()) {
    return Status::InvalidArgument(
        "both store.encryption_key_file and store.encryption_key (MSP_ENCRYPTION_KEY) are set; set one");
  }
  if (!options.encryption_key.empty()) {
    MSP_ASSIGN_OR_RETURN(StoreKey key, ParseKey(options.encryption_key, "in store.encryption_key (MSP_ENCRYPTION_KEY)"));
    return std::optional<StoreKey>(key);
  }
  if (options.encryption_key_file.empty()) return std::optional<StoreKey>();
  const std::string& path = options.encryption_key_file;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::InvalidArgument("cannot read the encryption key file " + path +
                                   " (store.encryption_key_file): " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    std::ostringstream mode;
    mode << std::oct << (st.st_mode & 0777);
    return Status::InvalidArgument("the encryption key file " + path + " is open to group or others (mode 0" +
                                   mode.str() + "); make it private: chmod 600 " + path);
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    return Status::InvalidArgument("cannot read the encryption key file " + path + " (store.encryption_key_file)");
  }
  Result<StoreKey> key = ParseKey(text, "in " + path);
  OPENSSL_cleanse(text.data(), text.size());
  if (!key.ok()) return key.status();
  return std::optional<StoreKey>(*key);
}

Status CheckStoreFile(const std::string& path, const std::optional<StoreKey>& key) {
  OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::Ok();  // none yet (or SQLite reports why)
  unsigned char header[kSqliteHeaderBytes];
  const ssize_t n = ::pread(fd.get(), header, sizeof(header), 0);
  if (n < static_cast<ssize_t>(sizeof(header))) return Status::Ok();  // empty: a new store
  const bool encrypted = std::memcmp(header, kEncryptedMagic, sizeof(kEncryptedMagic)) == 0;
  const bool plain = std::memcmp(header, kSqliteMagic, sizeof(kSqliteMagic)) == 0;
  if (!key) {
    if (!encrypted) return Status::Ok();
    return Status::FailedPrecondition(
        "the store " + path +
        " is encrypted and no key is given: set store.encryption_key_file (MSP_ENCRYPTION_KEY_FILE) or "
        "MSP_ENCRYPTION_KEY to its key");
  }
  if (plain) {
    return Status::FailedPrecondition(
        "an encryption key is set but the store " + path +
        " is not encrypted; unset the key to open it, or move its records into an encrypted store with msp "
        "export and msp import (docs/encryption.md)");
  }
  if (!encrypted) return Status::Ok();  // not a database: SQLite says so
  const int page_size = header[16] == 0 && header[17] == 1 ? 65536 : (header[16] << 8) | header[17];
  if (!IsPageSize(page_size) || header[20] != kReserveBytes) {
    return Status::Corruption("the encrypted store " + path + " has a damaged header (page size or reserve)");
  }
  std::vector<unsigned char> page(static_cast<size_t>(page_size));
  if (::pread(fd.get(), page.data(), page.size(), 0) != page_size) return Status::Ok();  // short: SQLite decides
  PageCipher cipher(PageKey(*key));
  if (!cipher.Open(page.data(), page_size, kSqliteHeaderBytes, FileKind::kMainDb, 0)) {
    return Status::FailedPrecondition("the encryption key does not open the store " + path +
                                      " (wrong key, or a damaged first page); nothing was changed");
  }
  return Status::Ok();
}

Result<std::string> EncryptedVfsName(const StoreKey& key) {
  static std::mutex mu;
  static std::map<std::array<unsigned char, 32>, std::unique_ptr<CipherVfs>>* registered =
      new std::map<std::array<unsigned char, 32>, std::unique_ptr<CipherVfs>>();  // lives with the process
  const std::array<unsigned char, 32> page_key = PageKey(key);
  std::lock_guard<std::mutex> lock(mu);
  auto it = registered->find(page_key);
  if (it != registered->end()) return it->second->name;
  sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
  if (base == nullptr) return Status::Internal("sqlite: no default VFS to encrypt over");
  auto self = std::make_unique<CipherVfs>();
  self->base = base;
  self->page_key = page_key;
  self->name = "msp-aes256gcm-" + std::to_string(registered->size() + 1);
  InitShimVfs(self.get(), static_cast<int>(sizeof(CipherFile)), CipherOpen);
  const int rc = sqlite3_vfs_register(&self->vfs, /*makeDflt=*/0);
  if (rc != SQLITE_OK) return Status::Internal(std::string("sqlite: cannot register the encrypting VFS: ") + sqlite3_errstr(rc));
  std::string name = self->name;
  registered->emplace(page_key, std::move(self));
  return name;
}

}  // namespace msp
