#include "mpcf/core/pcf_file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "mpcf/core/errors.hpp"

namespace mpcf::pcf_file {

namespace {

std::string sys(int err) { return std::strerror(err); }

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
