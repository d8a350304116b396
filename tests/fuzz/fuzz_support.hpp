// Helpers shared by the libFuzzer harnesses (tests/fuzz/, docs/testing.md).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/diagnostics.hpp"

namespace fleetsim::fuzz {

/// An in-memory file (memfd) whose contents each input replaces, reachable by a path
/// (/proc/self/fd/N) for readers that only take paths. No disk I/O, nothing left behind.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("fleetsim-fuzz", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { close(fd_); }

  /// Replaces the contents with `n` bytes; returns the path to open.
  const std::string& write(const std::uint8_t* data, std::size_t n) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < n) {
      ssize_t k = pwrite(fd_, data + done, n - done, static_cast<off_t>(done));
      if (k <= 0) std::abort();
      done += static_cast<std::size_t>(k);
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

/// The contract of every user-file parser: a refused input comes with at least one error,
/// and every error says which file it is about (file:line: error: ...). Aborts otherwise, so
/// that libFuzzer keeps the input.
inline void check_refusal(bool accepted, const Diagnostics& diags) {
  if (accepted) return;
  if (!diags.has_errors()) {
    std::fprintf(stderr, "fuzz: input refused without an error message\n");
    std::abort();
  }
  for (const auto& d : diags.items()) {
    if (d.where.file.empty()) {
      std::fprintf(stderr, "fuzz: diagnostic without a file: %s\n", d.message.c_str());
      std::abort();
    }
  }
}

}  // namespace fleetsim::fuzz
