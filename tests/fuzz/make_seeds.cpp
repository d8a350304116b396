// Writes the generated seed inputs of the fuzzers: frame logs and DEECo logs from short runs of
// the examples, their frame_log_packed form, and wire messages of every kind.
//   make_seeds SOURCE_DIR OUT_DIR   (fills OUT_DIR/<harness>/)
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "frame_log_packing.hpp"
#include "log/frame_log_reader.hpp"
#include "plugins/builtins.hpp"
#include "sim/checkpoint.hpp"
#include "sim/simulation.hpp"
#include "swarm_scene.hpp"
#include "transport/wire.hpp"

#include <thread>

namespace fs = std::filesystem;
using namespace fleetsim;

namespace {

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const void* data, std::size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// Runs `experiment` for `seconds` with one log of `format` at `log`.
void run(const fs::path& experiment, double seconds, log::LogFormat format, const fs::path& log) {
  PluginRegistry registry;
  register_builtins(registry);
  ExperimentOverrides ov;
  ov.length_s = seconds;
  ov.log_path = log.string();
  ov.log_format = format;
  ov.threads = 1;
  Diagnostics diags;
  auto ex = load_experiment(experiment.string(), registry, ov, diags);
  if (!ex) {
    diags.print(std::cerr);
    throw std::runtime_error("cannot load " + experiment.string());
  }
  Simulation sim(std::move(*ex), registry);
  sim.start();
  while (!sim.done()) sim.step();
  sim.finish();
}

/// The frame_log_packed form of a frame log: flags, decompressed header body and payloads.
std::string pack(const fs::path& flog, bool with_index) {
  namespace ff = log::frame_format;
  const std::string file = read_bytes(flog);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
  log::FrameLogReader reader(flog.string());
  auto unzstd = [](const std::uint8_t* z, std::size_t n, std::size_t raw) {
    std::string out(raw, '\0');
    if (ZSTD_isError(ZSTD_decompress(out.data(), raw, z, n))) throw std::runtime_error("zstd");
    return out;
  };
  std::uint64_t raw_size, stored;
  std::memcpy(&raw_size, bytes + 16, 8);
  std::memcpy(&stored, bytes + 24, 8);
  std::string out(1, static_cast<char>((reader.version() == 1 ? 1 : 0) | (with_index ? 0 : 2)));
  out += unzstd(bytes + ff::kFileHeaderSize, stored, raw_size);
  for (std::size_t i = 0; i < reader.frame_count(); ++i) {
    ff::RecordHeader h;
    const std::uint64_t at = reader.frame_offset(i);
    if (!ff::decode_record_header(bytes + at, h)) throw std::runtime_error("record header");
    out += fuzz::kFrameSeparator;
    out += static_cast<char>(h.new_tag_count);
    out +=
        unzstd(bytes + at + ff::kRecordHeaderSize + h.tag_block_size, h.payload_size, h.raw_size);
  }
  return out;
}

void write_wire_seeds(const fs::path& dir) {
  using transport::Message;
  using transport::MessageKind;
  std::vector<Message> messages;
  Message data{3, MessageKind::kData, 20'000'000, 10'000'000, false, {1, 2, 3, 4, 5, 6, 7, 8}};
  messages.push_back(data);
  Message empty{0, MessageKind::kData, 0, 1, false, {}};
  messages.push_back(empty);
  // An event flow's null message (flag, no payload).
  Message null_message{2, MessageKind::kData, 5'000'000, 3'000'000, true, {}};
  messages.push_back(null_message);
  // Lockstep: a step order (u64 iteration, u8 paused, then state) and an ack.
  Message step{0, MessageKind::kStep, 100'000'000, 100'000'000, false, {}};
  step.payload = {1, 0, 0, 0, 0, 0, 0, 0, 0, 42};
  messages.push_back(step);
  Message ack{1, MessageKind::kAck, 100'000'000, 100'000'000, false, {9, 9, 9}};
  messages.push_back(ack);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto bytes = transport::encode(messages[i]);
    write_bytes(dir / ("message" + std::to_string(i) + ".bin"), bytes.data(), bytes.size());
  }
}

/// What process 1 of a two-process run of `scene` sends (fuzz_swarm's or fuzz_domains's input),
/// with small and large parts.
void write_swarm_seeds(fuzz::Scene scene, const fs::path& dir) {
  for (std::size_t part_bytes : {std::size_t{256}, std::size_t{32} << 20}) {
    fuzz::PairExchange::Shared shared;
    std::vector<std::thread> threads;
    for (int p = 0; p < 2; ++p)
      threads.emplace_back([&, p] {
        PluginRegistry registry;
        register_builtins(registry);
        Diagnostics d;
        const char* xml = scene == fuzz::Scene::kSwarm ? fuzz::kSwarmScene : fuzz::kDomainScene;
        const ExperimentOverrides ov = fuzz::overrides_of(scene, p);
        auto ex = parse_experiment(xml, "swarm.xml", registry, ov, d);
        if (!ex) throw std::runtime_error("a fuzzer's scene does not load");
        fuzz::PairExchange exchange(shared, p);
        Distribution dist = fuzz::share_of(scene, *ex, p, &exchange, part_bytes);
        Simulation sim(std::move(*ex), registry, dist);
        sim.start();
        while (!sim.done()) sim.step();
        sim.gather_state();
        sim.finish();
        if (ov.log_path) fs::remove(*ov.log_path);
      });
    for (auto& t : threads) t.join();
    write_bytes(dir / ("run-" + std::to_string(part_bytes) + ".bin"), shared.recorded.data(),
                shared.recorded.size());
  }
}

/// Checkpoints of the swarm scene (fuzz_checkpoint's input): the file (mode 0) and the saved
/// state (mode 1), early and late in the run.
void write_checkpoint_seeds(const fs::path& dir) {
  PluginRegistry registry;
  register_builtins(registry);
  Diagnostics d;
  auto ex = parse_experiment(fuzz::kSwarmScene, "swarm.xml", registry, {}, d);
  if (!ex) throw std::runtime_error("the swarm scene does not load");
  const CheckpointIdentity id = identity_of(*ex, registry);
  Simulation sim(std::move(*ex), registry);
  std::vector<Checkpoint> taken;
  sim.enable_checkpoints([&](Tick t, std::uint64_t hash, std::vector<std::uint8_t> state) {
    taken.push_back({id, t, hash, std::move(state)});
  });
  sim.start();
  while (!sim.done()) {
    sim.step();
    if (sim.state().tick == 2 || sim.state().tick == 7) sim.request_checkpoint();
  }
  sim.finish();
  for (const Checkpoint& c : taken) {
    const std::string tick = std::to_string(c.tick);
    std::vector<std::uint8_t> file{0};
    const auto bytes = encode_checkpoint(c);
    file.insert(file.end(), bytes.begin(), bytes.end());
    write_bytes(dir / ("file-" + tick + ".bin"), file.data(), file.size());
    std::vector<std::uint8_t> state{1};
    state.insert(state.end(), c.state.begin(), c.state.end());
    write_bytes(dir / ("state-" + tick + ".bin"), state.data(), state.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_seeds SOURCE_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path src = argv[1], out = argv[2];
  try {
    for (const char* h :
         {"frame_log", "frame_log_packed", "deeco_log", "wire", "swarm", "domains", "checkpoint"})
      fs::create_directories(out / h);

    // Frame logs: tags, objects and LEDs (deeco), Lua foot-bots (footbot), version 1.
    run(src / "examples/deeco/deeco.xml", 0.3, log::LogFormat::kFrames,
        out / "frame_log/deeco.flog");
    run(src / "examples/footbot/aggregation.xml", 0.2, log::LogFormat::kFrames,
        out / "frame_log/footbot.flog");
    fs::copy_file(src / "tests/data/frame-log-v1.flog", out / "frame_log/v1.flog",
                  fs::copy_options::overwrite_existing);
    for (const char* name : {"deeco", "footbot", "v1"}) {
      const fs::path flog = out / "frame_log" / (std::string(name) + ".flog");
      // The same log as a writer that died before its index leaves it.
      log::FrameLogReader reader(flog.string());
      std::string bytes = read_bytes(flog);
      if (reader.has_index() && reader.frame_count() > 0) {
        std::string cut = bytes.substr(0, reader.frame_offset(reader.frame_count() - 1) + 60);
        write_bytes(out / "frame_log" / (std::string(name) + "-cut.flog"), cut.data(), cut.size());
      }
      for (bool index : {true, false}) {
        std::string packed = pack(flog, index);
        write_bytes(
            out / "frame_log_packed" / (std::string(name) + (index ? "" : "-scan") + ".bin"),
            packed.data(), packed.size());
      }
    }

    // DEECo text logs.
    run(src / "examples/deeco/deeco.xml", 0.3, log::LogFormat::kDeeco, out / "deeco_log/deeco.log");
    run(src / "examples/footbot/aggregation.xml", 0.2, log::LogFormat::kDeeco,
        out / "deeco_log/footbot.log");

    write_wire_seeds(out / "wire");
    write_swarm_seeds(fuzz::Scene::kSwarm, out / "swarm");
    write_swarm_seeds(fuzz::Scene::kDomains, out / "domains");
    write_checkpoint_seeds(out / "checkpoint");
  } catch (const std::exception& e) {
    std::cerr << "make_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
