// Little-endian byte encoding and POSIX file helpers shared by the log writers and readers.
//
// Every multi-byte value in a log is written field by field in little-endian order (never a
// struct dump), so a file holds no padding and no pointer: the same frames give the same bytes.
#pragma once

#include <sys/uio.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hash.hpp"
#include "log/log_writer.hpp"

namespace fleetsim::log {

static_assert(std::endian::native == std::endian::little,
              "the log formats are little-endian and so far only little-endian hosts write them");

/// Appends little-endian values to a growing byte buffer. Single-threaded.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  /// Appends `n` raw bytes.
  void raw(const void* data, std::size_t n) {
    if (n == 0) return;
    const std::size_t old = out_.size();
    out_.resize(old + n);
    std::memcpy(out_.data() + old, data, n);
  }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void i32(std::int32_t v) { raw(&v, 4); }
  void i64(std::int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  /// A string as u32 length then its bytes (no terminator).
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }

 private:
  std::vector<std::uint8_t>& out_;
};

/// Reads little-endian values from a byte range; every read is bounds-checked and throws
/// LogError with `what_` ("frame 12", "header") in the message when the data runs out.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size, std::string what)
      : p_(data), end_(data + size), what_(std::move(what)) {}
  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
  const std::uint8_t* take(std::size_t n) {
    if (n > remaining()) {
      throw LogError(what_ + " is corrupt (a field runs past the end of its record)");
    }
    const std::uint8_t* at = p_;
    p_ += n;
    return at;
  }
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  std::uint8_t u8() { return get<std::uint8_t>(); }
  std::uint16_t u16() { return get<std::uint16_t>(); }
  std::uint32_t u32() { return get<std::uint32_t>(); }
  std::uint64_t u64() { return get<std::uint64_t>(); }
  std::int32_t i32() { return get<std::int32_t>(); }
  std::int64_t i64() { return get<std::int64_t>(); }
  double f64() { return get<double>(); }
  std::string str() {
    std::uint32_t n = u32();
    const std::uint8_t* s = take(n);
    return std::string(reinterpret_cast<const char*>(s), n);
  }
  /// A count of elements of `element_size` bytes each that must still fit in the record:
  /// guards allocations against corrupt counts.
  std::size_t count(std::uint64_t n, std::size_t element_size) {
    if (element_size != 0 && n > remaining() / element_size) {
      throw LogError(what_ + " is corrupt (a count is larger than its record)");
    }
    return static_cast<std::size_t>(n);
  }
  const std::string& what() const { return what_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  std::string what_;
};

/// Writes all of `data` to `fd` (retrying short writes and EINTR). Throws LogError naming
/// `path` on failure.
void write_all(int fd, const void* data, std::size_t n, const std::string& path);

/// Writes the buffers `parts` one after the other to `fd`, with as few system calls as
/// writev() allows (retrying short writes and EINTR). Throws LogError naming `path` on failure.
void write_all(int fd, std::vector<iovec> parts, const std::string& path);

/// Reads exactly `n` bytes at `offset`; returns false if the file ends first. Throws LogError
/// on I/O errors.
bool read_exact_at(int fd, void* data, std::size_t n, std::uint64_t offset,
                   const std::string& path);

/// The size of the open file `fd`, in bytes.
std::uint64_t file_size(int fd, const std::string& path);

/// Opens `path` read-only; throws LogError ("cannot open ...: reason").
int open_for_reading(const std::string& path);

/// Creates or truncates `path` for writing (and reading back what was written); throws LogError
/// ("cannot create ...: reason").
int open_for_writing(const std::string& path);

/// Opens an existing log read-write, without truncating it (a resumed run goes on with it);
/// throws LogError ("cannot open ... to continue it: reason").
int open_for_continuing(const std::string& path);

/// Feeds bytes [from, to) of the file open on `fd` to `h`, read in blocks. Returns false if
/// the file ends first; throws LogError on I/O errors.
bool hash_file_range(int fd, std::uint64_t from, std::uint64_t to, StreamHasher& h,
                     const std::string& path);

/// Checks that the first `mark.bytes` bytes of the log open on `fd` are those `mark`
/// describes, cuts the file there and moves the write position to its end. Returns the hash
/// state of those bytes, to go on hashing what follows. Throws LogError saying what differs.
StreamHasher cut_to_mark(int fd, const LogMark& mark, const std::string& path);

/// An owned file descriptor, closed on destruction.
class FileHandle {
 public:
  FileHandle() = default;
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle() { close(); }
  int get() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  /// Closes the descriptor; returns false if close() reported an error.
  bool close();

 private:
  int fd_ = -1;
};

}  // namespace fleetsim::log
