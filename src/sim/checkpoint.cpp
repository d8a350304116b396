#include "sim/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/hash.hpp"
#include "log/byte_io.hpp"
#include "scenario/run_files.hpp"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

namespace fleetsim {

namespace {

constexpr char kMagic[8] = {'F', 'L', 'E', 'E', 'T', 'C', 'K', 'P'};
constexpr std::uint32_t kFormatVersion = 3;  // 3: the robots in parts (docs/checkpoints.md)
constexpr std::size_t kHeaderSize = 40;

std::uint64_t checksum(const std::uint8_t* head, const std::uint8_t* body, std::size_t n) {
  Hasher h;
  h.bytes(head, 32);
  h.bytes(body, n);
  return h.value();
}

}  // namespace

CheckpointIdentity identity_of(const Experiment& ex, const PluginRegistry& registry) {
  CheckpointIdentity id;
  id.version = FLEETSIM_VERSION;
  id.experiment = ex.path;
  for (const auto& [what, path] : run_files(ex, registry))
    id.files.push_back(
        {what, std::filesystem::path(path).filename().string(), file_content_hash(path)});
  Hasher h;
  // (The same whether the load placed the robots or left them to each process to place.)
  h.word(ex.world_fingerprint != 0 ? ex.world_fingerprint : ex.state.hash());
  h.word(ex.model->seed);
  h.word(static_cast<std::uint64_t>(ex.model->tick_period_ns));
  h.word(ex.model->engines.size());
  id.start_hash = h.value();
  return id;
}

std::string identity_mismatch(const CheckpointIdentity& saved, const CheckpointIdentity& now) {
  if (saved.version != now.version)
    return "it was written by fleetsim " + saved.version + " and this is fleetsim " + now.version +
           " (a checkpoint resumes with the version that wrote it)";
  for (const auto& f : saved.files) {
    auto it = std::find_if(now.files.begin(), now.files.end(),
                           [&](const auto& g) { return g[0] == f[0]; });
    if (it == now.files.end())
      return "the run it comes from loaded " + f[0] + " (" + f[1] + "), this one does not";
    if ((*it)[1] != f[1])
      return "the checkpointed run read " + f[1] + " as " + f[0] + ", this one reads " + (*it)[1];
    if ((*it)[2] != f[2])
      return f[0] + " " + f[1] + " differs from the one the checkpointed run read (content hash " +
             f[2] + " then, " + (*it)[2] + " now)";
  }
  for (const auto& f : now.files)
    if (std::none_of(saved.files.begin(), saved.files.end(),
                     [&](const auto& g) { return g[0] == f[0]; }))
      return "this run loads " + f[0] + " (" + f[1] + "), the checkpointed run did not";
  if (saved.start_hash != now.start_hash)
    return "the run starts from another world than the checkpointed one (another seed or "
           "option: give the options the checkpointed run was given)";
  return "";
}

std::vector<std::uint8_t> encode_checkpoint(const Checkpoint& c) {
  std::vector<std::uint8_t> body;
  log::ByteWriter w(body);
  w.str(c.identity.version);
  w.str(c.identity.experiment);
  w.u32(static_cast<std::uint32_t>(c.identity.files.size()));
  for (const auto& f : c.identity.files)
    for (const auto& s : f) w.str(s);
  w.u64(c.identity.start_hash);
  w.i64(c.tick);
  w.u64(c.state_hash);
  w.u64(c.state.size());

  // The body is the bytes above, then the state: compressed as one frame, without a copy of
  // the state (a checkpoint's state is about the world's size).
  const std::size_t body_size = body.size() + c.state.size();
  std::vector<std::uint8_t> out(kHeaderSize + ZSTD_compressBound(body_size));
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> z(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  auto fail = [](std::size_t r) {
    if (ZSTD_isError(r))
      throw CheckpointError(std::string("cannot compress a checkpoint: ") + ZSTD_getErrorName(r));
  };
  if (!z) throw CheckpointError("cannot compress a checkpoint: no memory");
  fail(ZSTD_CCtx_setParameter(z.get(), ZSTD_c_compressionLevel, 1));
  fail(ZSTD_CCtx_setPledgedSrcSize(z.get(), body_size));
  ZSTD_outBuffer o{out.data() + kHeaderSize, out.size() - kHeaderSize, 0};
  ZSTD_inBuffer first{body.data(), body.size(), 0}, second{c.state.data(), c.state.size(), 0};
  while (first.pos < first.size) fail(ZSTD_compressStream2(z.get(), &o, &first, ZSTD_e_continue));
  for (std::size_t left = 1; left != 0;) {
    left = ZSTD_compressStream2(z.get(), &o, &second, ZSTD_e_end);
    fail(left);
  }
  const std::size_t stored = o.pos;
  out.resize(kHeaderSize + stored);
  std::vector<std::uint8_t> head;
  log::ByteWriter h(head);
  h.raw(kMagic, 8);
  h.u32(kFormatVersion);
  h.u32(0);
  h.u64(body_size);
  h.u64(stored);
  std::memcpy(out.data(), head.data(), head.size());
  const std::uint64_t sum = checksum(out.data(), out.data() + kHeaderSize, stored);
  std::memcpy(out.data() + 32, &sum, 8);
  return out;
}

Checkpoint decode_checkpoint(std::span<const std::uint8_t> bytes, const std::string& what) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw CheckpointError(what +
                          " is not a fleetsim checkpoint (`fleetsim run --checkpoint-every` "
                          "writes them)");
  log::ByteReader r(bytes.data(), kHeaderSize, what);
  r.take(8);
  const std::uint32_t version = r.u32();
  r.u32();
  const std::uint64_t body_size = r.u64(), stored = r.u64(), sum = r.u64();
  if (version != kFormatVersion)
    throw CheckpointError(what + " has checkpoint format " + std::to_string(version) +
                          "; this fleetsim reads format " + std::to_string(kFormatVersion) +
                          " (resume with the fleetsim that wrote it)");
  if (stored != bytes.size() - kHeaderSize)
    throw CheckpointError(what + " is corrupt or cut short (" + std::to_string(bytes.size()) +
                          " bytes; its header says " + std::to_string(kHeaderSize + stored) + ")");
  if (checksum(bytes.data(), bytes.data() + kHeaderSize, stored) != sum)
    throw CheckpointError(what + " is corrupt (its checksum does not match)");
  // A checksummed file may still be hand-made: the body's size is bounded by what zstd can
  // expand the stored bytes to.
  if (body_size > stored * 2000 + 4096 ||
      ZSTD_getFrameContentSize(bytes.data() + kHeaderSize, stored) != body_size)
    throw CheckpointError(what + " is corrupt (its sizes do not agree)");
  std::vector<std::uint8_t> body(body_size);
  const std::size_t got =
      ZSTD_decompress(body.data(), body.size(), bytes.data() + kHeaderSize, stored);
  if (ZSTD_isError(got) || got != body_size)
    throw CheckpointError(what + " is corrupt (it does not decompress)");
  Checkpoint c;
  try {
    log::ByteReader b(body.data(), body.size(), what);
    c.identity.version = b.str();
    c.identity.experiment = b.str();
    c.identity.files.resize(b.count(b.u32(), 12));
    for (auto& f : c.identity.files)
      for (auto& s : f) s = b.str();
    c.identity.start_hash = b.u64();
    c.tick = b.i64();
    c.state_hash = b.u64();
    const std::size_t n = b.count(b.u64(), 1);
    const std::uint8_t* state = b.take(n);
    c.state.assign(state, state + n);
    if (b.remaining() != 0 || c.tick < 0) throw log::LogError(what + " is corrupt");
  } catch (const log::LogError& e) {
    throw CheckpointError(e.what());
  }
  return c;
}

Checkpoint read_checkpoint(const std::string& path, std::string* chosen) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    // The newest: the highest tick in the names the run gave them (STEM-tTICK.ckpt).
    long long best = -1;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      const auto t = name.rfind("-t");
      if (entry.path().extension() != ".ckpt" || t == std::string::npos) continue;
      const std::string digits = name.substr(t + 2, name.size() - 5 - (t + 2));
      if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
      const long long tick = std::stoll(digits);
      if (tick > best || (tick == best && entry.path().string() > file)) {
        best = tick;
        file = entry.path().string();
      }
    }
    if (best < 0)
      throw CheckpointError(path +
                            " holds no checkpoint (*-tTICK.ckpt files, written by "
                            "`fleetsim run --checkpoint-every`)");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CheckpointError("cannot open checkpoint " + file + ": " + std::strerror(errno));
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  if (chosen) *chosen = file;
  return decode_checkpoint(bytes, "checkpoint " + file);
}

CheckpointFiles::CheckpointFiles(std::string dir, std::string stem, int keep)
    : dir_(std::move(dir)), stem_(std::move(stem)), keep_(std::max(1, keep)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw CheckpointError("cannot create the checkpoint directory " + dir_ + ": " +
                          (ec ? ec.message() : "a file of that name is in the way"));
}

std::string CheckpointFiles::write(Tick tick, const std::vector<std::uint8_t>& bytes) {
  char name[64];
  std::snprintf(name, sizeof name, "-t%010lld.ckpt", static_cast<long long>(tick));
  const std::string path = (std::filesystem::path(dir_) / (stem_ + name)).string();
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError("cannot write checkpoint " + tmp + ": " + std::strerror(errno));
  log::FileHandle file(fd);
  try {
    log::write_all(fd, bytes.data(), bytes.size(), tmp);
  } catch (const std::exception& e) {
    ::unlink(tmp.c_str());
    throw CheckpointError(std::string("checkpoint: ") + e.what());
  }
  if (::fsync(fd) != 0 || !file.close() || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw CheckpointError("cannot write checkpoint " + path + ": " + why);
  }
  written_.erase(std::remove(written_.begin(), written_.end(), path), written_.end());
  written_.push_back(path);
  while (written_.size() > static_cast<std::size_t>(keep_)) {
    ::unlink(written_.front().c_str());
    written_.erase(written_.begin());
  }
  return path;
}

CheckpointSink checkpoint_sink(CheckpointIdentity id, std::shared_ptr<CheckpointFiles> files) {
  return
      [id = std::move(id), files](Tick tick, std::uint64_t hash, std::vector<std::uint8_t> state) {
        Checkpoint c{id, tick, hash, std::move(state)};
        try {
          files->write(tick, encode_checkpoint(c));
        } catch (const CheckpointError& e) {
          throw RunError(e.what());
        }
      };
}

}  // namespace fleetsim
