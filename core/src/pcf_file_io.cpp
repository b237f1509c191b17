#include "mpcf/core/pcf_file_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "mpcf/core/errors.hpp"

namespace mpcf::pcf_file {

namespace {

constexpr char kTempPrefix[] = ".mpcf-save-";
constexpr std::size_t kTempPrefixLength = sizeof kTempPrefix - 1;
constexpr std::size_t kTempRandomLength = 6;
constexpr int kMaxSymlinks = 40;  // as the kernel's limit for one path
constexpr int kNameAttempts = 100;

std::string sys(int err) { return std::strerror(err); }

// The testing hooks of mpcf.h: set, and not "" or "0".
bool hook(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// A file descriptor, closed at the end of its scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// What a file of mode m is, for messages ("it is a FIFO (named pipe)").
const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

// "a/b/c" -> "a/b/" and "c"; "c" -> "" and "c"; "a/" -> "a/" and "".
std::string dir_part(const std::string& p) {
  const std::size_t k = p.rfind('/');
  return k == std::string::npos ? std::string() : p.substr(0, k + 1);
}
std::string base_part(const std::string& p) {
  const std::size_t k = p.rfind('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}
// A directory as dir_part gives it, for opening and for messages.
std::string dir_name(const std::string& dir) {
  if (dir.empty()) return ".";
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

std::int64_t mtime_ns(const struct stat& st) {
#if defined(__APPLE__)
  return std::int64_t{st.st_mtimespec.tv_sec} * 1000000000 + st.st_mtimespec.tv_nsec;
#else
  return std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
#endif
}

// ---- Saving --------------------------------------------------------------

// Every failure of one save names the path it was asked to write.
class Save {
 public:
  explicit Save(const std::string& path) : path_(path) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument("cannot save to '" + path_ + "': " + what);
  }
  const std::string& path() const { return path_; }

 private:
  const std::string& path_;
};

// Where the symbolic links from a path end.
struct Target {
  std::string path;  // the path itself when it is not a link
  int links = 0;     // links followed
  std::string first_link;  // the text of the first link
  bool exists = false;
  struct stat st {};
};

std::string read_link(const Save& save, const std::string& link, const struct stat& st) {
  std::vector<char> buf(st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 256);
  for (;;) {
    const ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
    if (n < 0) save.fail("cannot read the symbolic link '" + link + "': " + sys(errno));
    if (static_cast<std::size_t>(n) < buf.size()) return std::string(buf.data(), static_cast<std::size_t>(n));
    buf.resize(buf.size() * 2);
  }
}

Target resolve(const Save& save) {
  Target t;
  t.path = save.path();
  for (;;) {
    if (::lstat(t.path.c_str(), &t.st) != 0) {
      const int err = errno;
      // Not there: created (a missing directory is reported when opened).
      if (err == ENOENT) return t;
      save.fail(t.links == 0 ? sys(err) : "its link target '" + t.path + "': " + sys(err));
    }
    if (!S_ISLNK(t.st.st_mode)) {
      t.exists = true;
      return t;
    }
    if (t.links == kMaxSymlinks) save.fail(sys(ELOOP));
    const std::string text = read_link(save, t.path, t.st);
    if (t.links++ == 0) t.first_link = text;
    t.path = !text.empty() && text[0] == '/' ? text : dir_part(t.path) + text;
  }
}

// The refusals: anything but a regular file, and a file this process may
// not write (as open() would decide: a read-only file is not replaced).
void check_target(const Save& save, const Target& t) {
  if (t.exists && !S_ISREG(t.st.st_mode)) {
    const std::string kind = kind_of(t.st.st_mode);
    if (t.links == 0) save.fail("it is " + kind + ", not a regular file");
    const std::string to = t.links == 1 ? t.first_link : t.path;
    save.fail("it is a symbolic link to '" + to + "', which is " + kind + ", not a regular file");
  }
  if (t.exists && ::faccessat(AT_FDCWD, t.path.c_str(), W_OK, AT_EACCESS) != 0) {
    const int err = errno;
    save.fail((t.links == 0 ? std::string("it") : "its link target '" + t.path + "'") +
              " is not writable (" + sys(err) + ")");
  }
  if (base_part(t.path).empty()) save.fail("the path ends in '/', so it names a directory");
}

// A fresh ".mpcf-save-XXXXXX" (letters and digits): unique enough that a
// collision (then retried) is rare, short enough for any directory.
std::string temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t x = counter.fetch_add(1) * 0x9e3779b97f4a7c15ull;
  x ^= static_cast<std::uint64_t>(::getpid()) << 32;
  x ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  x ^= reinterpret_cast<std::uintptr_t>(&x);
  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string name = kTempPrefix;
  for (std::size_t k = 0; k < kTempRandomLength; ++k) {
    name += kAlphabet[x % 62];
    x /= 62;
  }
  return name;
}

bool is_temp_name(const char* name) {
  if (std::strncmp(name, kTempPrefix, kTempPrefixLength) != 0) return false;
  const char* rest = name + kTempPrefixLength;
  std::size_t k = 0;
  for (; rest[k] != '\0'; ++k) {
    const char c = rest[k];
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum) return false;
  }
  return k == kTempRandomLength;
}

// Removes the stale temporaries of the directory (pcf_file_io.hpp, 2):
// regular files that no process holds locked and that nobody has written
// to for kStaleSeconds. Best effort: anything that cannot be examined is
// kept. Returns whether it kept any temporary (so the directory is not yet
// clean).
bool remove_stale_temporaries(int dirfd) {
  const int listed = ::dup(dirfd);
  if (listed < 0) return true;
  DIR* dir = ::fdopendir(listed);
  if (dir == nullptr) {
    ::close(listed);
    return true;
  }
  ::rewinddir(dir);
  const std::time_t now = std::time(nullptr);
  bool kept = false;
  while (const struct dirent* entry = ::readdir(dir)) {
    const char* name = entry->d_name;
    if (!is_temp_name(name)) continue;
    struct stat st;
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
      kept = true;
      continue;
    }
    Fd fd(::openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat held, again;
    const bool stale = fd.get() >= 0 && ::fstat(fd.get(), &held) == 0 &&
                       held.st_ino == st.st_ino && held.st_dev == st.st_dev &&
                       ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0 &&
                       now - held.st_mtime >= kStaleSeconds &&
                       ::fstatat(dirfd, name, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
                       again.st_ino == held.st_ino && again.st_dev == held.st_dev;
    if (!stale || ::unlinkat(dirfd, name, 0) != 0) kept = true;
  }
  ::closedir(dir);
  return kept;
}

// The directories this process found clean, with their mtime then: one that
// has not changed since holds no new temporary, so it is not listed again.
class CleanDirectories {
 public:
  bool clean(const struct stat& dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_) {
      if (e.dev == dir.st_dev && e.ino == dir.st_ino) return e.mtime == mtime_ns(dir);
    }
    return false;
  }
  void set(const struct stat& dir, bool clean) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return e.dev == dir.st_dev && e.ino == dir.st_ino;
    });
    if (it != entries_.end()) entries_.erase(it);
    if (!clean) return;
    if (entries_.size() == kMaxEntries) entries_.erase(entries_.begin());
    entries_.push_back({dir.st_dev, dir.st_ino, mtime_ns(dir)});
  }

 private:
  struct Entry {
    dev_t dev;
    ino_t ino;
    std::int64_t mtime;
  };
  static constexpr std::size_t kMaxEntries = 64;
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

CleanDirectories& clean_directories() {
  static CleanDirectories* dirs = new CleanDirectories;  // never destroyed: saves may run at exit
  return *dirs;
}

// The temporary file of a save: removed (if it has a name) unless
// published.
class Temporary {
 public:
  explicit Temporary(int dirfd) : dirfd_(dirfd) {}
  ~Temporary() {
    if (!name_.empty()) ::unlinkat(dirfd_, name_.c_str(), 0);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  Fd fd;
  void named(std::string name) { name_ = std::move(name); }
  const std::string& name() const { return name_; }
  void published() { name_.clear(); }

 private:
  int dirfd_;
  std::string name_;
};

// Writes through a buffer to a file descriptor; with `stop_at` below the
// file's size, the testing hook MPCF_DEBUG_SAVE_STOP: the process kills
// itself once that many bytes are in the file.
class FdSink final : public Sink {
 public:
  FdSink(int fd, const Save& save, const std::string& dir, std::uint64_t stop_at)
      : fd_(fd), save_(save), dir_(dir), stop_at_(stop_at) {
    buffer_.reserve(kBufferBytes);
  }

  void write(const void* data, std::size_t bytes) override {
    const auto* p = static_cast<const unsigned char*>(data);
    if (bytes > stop_at_ - written_) {
      append(p, static_cast<std::size_t>(stop_at_ - written_));
      flush();
      // SIGKILL cannot be caught; no _exit() (the R package may not call it).
      for (;;) ::raise(SIGKILL);
    }
    append(p, bytes);
  }

  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  std::uint64_t written() const { return written_; }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

  void append(const unsigned char* p, std::size_t bytes) {
    written_ += bytes;
    if (buffer_.size() + bytes > kBufferBytes) {
      flush();
      if (bytes >= kBufferBytes) {
        write_all(p, bytes);
        return;
      }
    }
    buffer_.insert(buffer_.end(), p, p + bytes);
  }

  void write_all(const unsigned char* p, std::size_t bytes) {
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, std::min<std::size_t>(bytes, std::size_t{1} << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : ENOSPC;
        save_.fail("cannot write its temporary file in '" + dir_ + "': " + sys(err));
      }
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
  }

  int fd_;
  const Save& save_;
  const std::string& dir_;
  std::uint64_t stop_at_;
  std::uint64_t written_ = 0;
  std::vector<unsigned char> buffer_;
};

bool sync_file(int fd) {
#if defined(__APPLE__)
  if (::fcntl(fd, F_FULLFSYNC) == 0) return true;
#endif
  return ::fsync(fd) == 0;
}

// A new file in the directory: unnamed (O_TMPFILE) where the system and the
// file system have it, else named; locked, so that no other save takes it
// for stale.
void create_temporary(const Save& save, int dirfd, const std::string& dir, Temporary& temp,
                      bool& unnamed) {
  unnamed = false;
#ifdef O_TMPFILE
  if (!hook("MPCF_DEBUG_SAVE_NAMED")) {
    const int fd = ::openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) {
      temp.fd.reset(fd);
      unnamed = true;
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
      save.fail("cannot create a file in its directory '" + dir + "': " + sys(errno));
    }
  }
#endif
  if (!unnamed) {
    for (int attempt = 1;; ++attempt) {
      std::string name = temp_name();
      const int fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        temp.fd.reset(fd);
        temp.named(std::move(name));
        break;
      }
      if (errno != EEXIST || attempt == kNameAttempts) {
        save.fail("cannot create a file in its directory '" + dir + "': " + sys(errno));
      }
    }
  }
  // Best effort: a file system without locks keeps every temporary younger
  // than kStaleSeconds, and one that cannot be locked, forever.
  (void)::flock(temp.fd.get(), LOCK_EX | LOCK_NB);
}

// Gives the unnamed file a fresh temporary name in the directory.
void link_temporary(const Save& save, int dirfd, const std::string& dir, Temporary& temp) {
  const std::string proc = "/proc/self/fd/" + std::to_string(temp.fd.get());
  for (int attempt = 1;; ++attempt) {
    std::string name = temp_name();
    int done = ::linkat(AT_FDCWD, proc.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW);
    int err = errno;
#ifdef AT_EMPTY_PATH
    if (done != 0 && err == ENOENT) {  // no /proc: needs CAP_DAC_READ_SEARCH
      done = ::linkat(temp.fd.get(), "", dirfd, name.c_str(), AT_EMPTY_PATH);
      if (done != 0 && errno == EEXIST) err = EEXIST;
    }
#endif
    if (done == 0) {
      temp.named(std::move(name));
      return;
    }
    if (err != EEXIST || attempt == kNameAttempts) {
      save.fail("cannot give its new content a name in its directory '" + dir + "': " + sys(err));
    }
  }
}

}  // namespace

void save_file(const std::string& path, std::uint64_t size,
               const std::function<void(Sink&)>& write) {
  const Save save(path);
  const Target target = resolve(save);
  check_target(save, target);
  const std::string dir = dir_name(dir_part(target.path));
  const std::string base = base_part(target.path);

  Fd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  bool listable = true;
#ifdef O_PATH
  if (dirfd.get() < 0 && errno == EACCES) {  // write and search permission only
    dirfd.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    listable = false;
  }
#endif
  if (dirfd.get() < 0) save.fail("its directory '" + dir + "' cannot be opened: " + sys(errno));

  struct stat dir_st;
  bool kept_temporaries = !listable;
  if (listable && ::fstat(dirfd.get(), &dir_st) == 0 && !clean_directories().clean(dir_st)) {
    kept_temporaries = remove_stale_temporaries(dirfd.get());
  }

  Temporary temp(dirfd.get());
  bool unnamed = false;
  create_temporary(save, dirfd.get(), dir, temp, unnamed);
  if (target.exists) {
    // The replaced file's owner (where allowed: root, or a group of the
    // caller's) and mode, in this order (fchown clears set-id bits).
    // Best effort (an unprivileged caller may not give the file away); the
    // result is tested because glibc marks fchown warn_unused_result.
    if (::fchown(temp.fd.get(), target.st.st_uid, target.st.st_gid) != 0) {
    }
    (void)::fchmod(temp.fd.get(), target.st.st_mode & 07777);
  }

  const std::uint64_t stop_at = hook("MPCF_DEBUG_SAVE_STOP") ? size / 2 : UINT64_MAX;
  FdSink sink(temp.fd.get(), save, dir, stop_at);
  write(sink);
  sink.flush();
  if (sink.written() != size) {
    throw Error(ErrorKind::Internal, "saving '" + path + "' produced " + std::to_string(sink.written()) +
                                         " bytes, not the " + std::to_string(size) + " announced");
  }
  if (!sync_file(temp.fd.get())) {
    save.fail("cannot write its temporary file in '" + dir + "' to disk: " + sys(errno));
  }

  if (unnamed) link_temporary(save, dirfd.get(), dir, temp);
  if (::renameat(dirfd.get(), temp.name().c_str(), dirfd.get(), base.c_str()) != 0) {
    const int err = errno;
    save.fail("cannot rename its temporary file '" + (dir == "/" ? "" : dir) + "/" + temp.name() +
              "' to '" + target.path + "': " + sys(err));
  }
  temp.published();
  // The rename is durable once the directory is (EINVAL: a directory that
  // cannot be synced, e.g. on some network file systems).
  if (listable && !sync_file(dirfd.get()) && errno != EINVAL) {
    const int err = errno;
    save.fail("the new file is in place, but its directory '" + dir +
              "' could not be written to disk, so it may not survive a crash: " + sys(err));
  }
  if (listable && ::fstat(dirfd.get(), &dir_st) == 0) clean_directories().set(dir_st, !kept_temporaries);
}

// ---- Loading -------------------------------------------------------------

namespace {

class FdSource final : public Source {
 public:
  FdSource(int fd, const std::string& path) : fd_(fd), path_(path) {}
  std::size_t read(void* data, std::size_t bytes) override {
    auto* p = static_cast<unsigned char*>(data);
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::read(fd_, p + done, std::min<std::size_t>(bytes - done, std::size_t{1} << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InvalidArgument("cannot read '" + path_ + "': " + sys(errno));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

 private:
  int fd_;
  const std::string& path_;
};

}  // namespace

Loaded load_file(const std::string& path) {
  // A FIFO blocks here until a writer opens it, as for any reader.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) throw InvalidArgument("cannot open '" + path + "': " + sys(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) throw InvalidArgument("cannot read '" + path + "': " + sys(errno));
  if (S_ISDIR(st.st_mode)) throw InvalidArgument("cannot read '" + path + "': it is a directory");
  FdSource source(fd.get(), path);
  const std::uint64_t size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : kUnknownSize;
  return read(source, size, "file '" + path + "'");
}

}  // namespace mpcf::pcf_file
