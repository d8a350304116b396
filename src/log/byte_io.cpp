#include "log/byte_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace fleetsim::log {

namespace {

std::string reason() {
  return std::strerror(errno);
}

}  // namespace

void write_all(int fd, const void* data, std::size_t n, const std::string& path) {
  write_all(fd, {iovec{const_cast<void*>(data), n}}, path);  // (writev does not write to it)
}

void write_all(int fd, std::vector<iovec> parts, const std::string& path) {
  std::size_t first = 0;
  while (first < parts.size()) {
    const int count = static_cast<int>(std::min<std::size_t>(parts.size() - first, IOV_MAX));
    ssize_t k = ::writev(fd, parts.data() + first, count);
    if (k < 0) {
      if (errno == EINTR) continue;
      throw LogError("cannot write log '" + path + "': " + reason());
    }
    // Skip what was written: whole buffers, then the start of the next one.
    auto left = static_cast<std::size_t>(k);
    while (first < parts.size() && left >= parts[first].iov_len) left -= parts[first++].iov_len;
    if (left > 0) {
      parts[first].iov_base = static_cast<std::uint8_t*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
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
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw LogError("cannot create log '" + path + "': " + reason());
  return fd;
}

int open_for_continuing(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    throw LogError("cannot open log '" + path + "' to continue it: " + reason() +
                   " (a resumed run goes on writing the log the checkpointed run wrote)");
  return fd;
}

bool hash_file_range(int fd, std::uint64_t from, std::uint64_t to, StreamHasher& h,
                     const std::string& path) {
  std::vector<std::uint8_t> block(std::size_t{1} << 20);
  for (std::uint64_t at = from; at < to;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), to - at));
    if (!read_exact_at(fd, block.data(), n, at, path)) return false;
    h.bytes(block.data(), n);
    at += n;
  }
  return true;
}

StreamHasher cut_to_mark(int fd, const LogMark& mark, const std::string& path) {
  const std::uint64_t size = file_size(fd, path);
  if (size < mark.bytes)
    throw LogError("log '" + path + "' has " + std::to_string(size) + " bytes, fewer than the " +
                   std::to_string(mark.bytes) +
                   " it had at the checkpoint: it was cut or replaced since; resume from an "
                   "earlier checkpoint, or start the run again");
  StreamHasher h;
  if (!hash_file_range(fd, 0, mark.bytes, h, path))
    throw LogError("log '" + path + "' ended while it was being read");
  if (h.value() != mark.hash)
    throw LogError("log '" + path + "' is not the one this checkpoint continues (its first " +
                   std::to_string(mark.bytes) +
                   " bytes differ: it was changed or written by another run since); resume "
                   "from a checkpoint of the run that wrote it, or start the run again");
  if (::ftruncate(fd, static_cast<off_t>(mark.bytes)) != 0 ||
      ::lseek(fd, static_cast<off_t>(mark.bytes), SEEK_SET) < 0)
    throw LogError("cannot cut log '" + path + "' back to the checkpoint: " + reason());
  return h;
}

bool FileHandle::close() {
  if (fd_ < 0) return true;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0;
}

}  // namespace fleetsim::log
