#include "log/byte_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fleetsim::log {

namespace {

std::string reason() { return std::strerror(errno); }

}  // namespace

void write_all(int fd, const void* data, std::size_t n, const std::string& path) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n > 0) {
    ssize_t k = ::write(fd, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      throw LogError("cannot write log '" + path + "': " + reason());
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

bool read_exact_at(int fd, void* data, std::size_t n, std::uint64_t offset,
                   const std::string& path) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (n > 0) {
    ssize_t k = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (k < 0) {
      if (errno == EINTR) continue;
      throw LogError("cannot read log '" + path + "': " + reason());
    }
    if (k == 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
    offset += static_cast<std::uint64_t>(k);
  }
  return true;
}

std::uint64_t file_size(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw LogError("cannot stat log '" + path + "': " + reason());
  if (!S_ISREG(st.st_mode)) throw LogError("'" + path + "' is not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

int open_for_reading(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LogError("cannot open log '" + path + "': " + reason());
  return fd;
}

int open_for_writing(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw LogError("cannot create log '" + path + "': " + reason());
  return fd;
}

bool FileHandle::close() {
  if (fd_ < 0) return true;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0;
}

}  // namespace fleetsim::log
