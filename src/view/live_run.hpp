// A run as the live view sees it (`fleetsim run --view`, docs/view-format.md, "Live view"):
// the frames computed so far and the run's controls (pause, play, one tick, speed).
//
// The simulation writes frames into it as into a log of its own (it is a log::LogWriter given
// to Simulation::observe_frames), and the view server reads them back as from a log (it is a
// log::LogReader): the page then decodes live frames with the chunk decoder it uses for a
// replay, one encoding for both (frame_encoding.hpp).
//
// Threads: the run's main thread calls the writer's methods, before_step() and end(); the
// server's threads call the reader's methods, control(), status() and wait(). One mutex guards
// everything; the run's thread holds it only to append a frame and, when the run is paused or
// paced, to wait. Nothing here feeds back into the simulation: pausing and pacing only delay
// the next step (timing is not one of the simulation's inputs), so a run watched or steered
// gives the same bits as one not.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/script_globals.hpp"
#include "fleetsim/types.hpp"
#include "log/log_reader.hpp"
#include "log/log_writer.hpp"

namespace fleetsim::view {

class LiveRun final : public log::LogWriter, public log::LogReader {
 public:
  struct Options {
    bool paused = false;  ///< the run waits for "play" or "step" before its first tick
    double speed = 0;     ///< simulated seconds per wall second; 0: as fast as possible
    /// Frames kept for scrolling back, bytes of their columns at most; the oldest go first
    /// (the run's own log keeps them all).
    std::size_t memory_bytes = std::size_t{1} << 30;
    /// While the run goes at full speed, frames held a wall second at most (the others are
    /// skipped, their tick still shown) while a page watches, and while none does (0: every
    /// frame); paused, stepped or paced, every frame is held.
    double held_fps = 30;
    double idle_held_fps = 1;
  };
  explicit LiveRun(Options options);

  // --- log::LogWriter: the run's main thread -----------------------------------------------
  /// The first call gives the header. A later one comes after the run was reset
  /// (Simulation::reset): the world is back at its start, whose header is the first one's, so
  /// only the tag table starts again (the frames held before are kept, their ticks before the
  /// reset), and the next frame is held.
  void begin(const log::LogHeader& header) override;
  /// Holds the frame (copies its columns: the page may ask for any frame still held), or at
  /// full speed skips it when one was held less than 1 / held_fps s ago; a skipped frame's
  /// view is kept (it must stay valid until the next step begins, as the simulation's does) and
  /// held if the run then pauses (before_step()) or ends (finish()).
  void write(const log::LogFrameView& frame) override;
  /// A frame of a run split over processes, its robots in the frame log's compressed blocks
  /// (Simulation: on the ticks it asked for, wants_whole_frame(), and those a split log keeps):
  /// held as they came, at about 21 bytes a robot, at most held_fps a wall second at full
  /// speed as write()'s; read_frame() decodes it as the frame log's reader decodes a record.
  void write_blocks(const log::LogFrameView& head,
                    std::vector<log::frame_format::EncodedBlock> blocks) override;
  /// Holds the last frame written if it was skipped. Call right after that write() (a
  /// skipped frame's spans are trusted only until the next before_step()).
  void finish() override;
  log::LogMark mark() override { return {}; }
  /// Throws: a live view is not continued from a checkpoint's mark (begin() is called).
  void resume(const log::LogHeader& header, const log::LogMark& mark) override;

  // --- log::LogReader: server threads ------------------------------------------------------
  log::LogFormat format() const override { return log::LogFormat::kFrames; }
  /// Valid once begin() has been called (the server starts after the simulation's start()).
  const log::LogHeader& header() const override { return header_; }
  /// Frames held so far (including those dropped since for memory).
  std::size_t frame_count() const override;
  /// Throws log::LogError for a frame no longer held or not written yet.
  log::LogFrame read_frame(std::size_t index) override;

  /// What a page may add (an "add" request): the run's robot kinds and controller ids. Set
  /// once by the run's thread before the server starts; read by server threads after.
  void set_addable(std::vector<std::string> kinds, std::vector<std::string> controllers) {
    addable_kinds_ = std::move(kinds);
    addable_controllers_ = std::move(controllers);
  }
  const std::vector<std::string>& addable_kinds() const { return addable_kinds_; }
  const std::vector<std::string>& addable_controllers() const { return addable_controllers_; }

  // --- Control: server threads -------------------------------------------------------------
  /// Applies a command: "pause", "play", "step" (one tick, then paused) or "speed" with
  /// `value` (simulated seconds per wall second, > 0; nullopt: as fast as possible). Returns
  /// why it was refused (an unknown command, a bad value, a run that has ended), else "".
  std::string control(const std::string& command, std::optional<double> value);

  /// An intervention asked for by a page: it lands at the next tick boundary (the run's
  /// thread takes it with take_requests()), or is refused there (report_intervention()).
  struct Request {
    enum class Kind {
      kMove,     ///< a robot dragged to a new pose
      kReset,    ///< the experiment's reset (Simulation::reset)
      kAdd,      ///< a robot added
      kRemove,   ///< a robot removed
      kLeds,     ///< a robot's LEDs set
      kCommand,  ///< a robot's actuator command held
      kRelease,  ///< a held command released
      kParam,    ///< a global of a robot's script set
      kLook,     ///< not an intervention: a page asks for a robot as the run holds it
    };
    Kind kind = Kind::kMove;
    std::uint32_t robot = 0;             ///< entity id (move, remove)
    double x = 0, y = 0;                 ///< metres, world frame (move, add)
    std::optional<double> heading;       ///< radians; none: kept (move), 0 (add)
    std::string robot_kind, controller;  ///< add: the experiment's names
    Color color;                         ///< leds
    std::string actuator;                ///< command, release
    std::vector<double> values;          ///< command
    std::string name;                    ///< param: the global's name
    ScriptValue value;                   ///< param
  };
  /// Queues a request; returns why it is refused at once (the run has ended), else "".
  std::string request(const Request& r);

  /// Server threads: robot `robot` as the run holds it (JSON made by the run's thread at its
  /// next tick boundary: a Request of kind kLook, answered with answer_look()); "" when no
  /// answer came within `timeout` (the run has ended).
  std::string look(std::uint32_t robot, std::chrono::milliseconds timeout);
  /// The run's thread, between steps: the answer to a kLook request.
  void answer_look(std::uint32_t robot, std::string json);

  /// What a page shows of the run.
  struct Status {
    std::uint64_t frames = 0;         ///< frames held so far (the page's frame count)
    std::uint64_t first_frame = 0;    ///< oldest frame still held
    Tick tick = 0;                    ///< tick of the newest frame computed (held or not)
    std::string state;                ///< "running", "paused" or "ended"
    double speed = 0;                 ///< 0: as fast as possible
    std::string end_message;          ///< how the run ended, once it has
    std::uint64_t version = 0;        ///< changes with every control and with the end
    std::string intervention;         ///< what became of the last intervention
    std::uint64_t interventions = 0;  ///< interventions landed
  };
  Status status() const;
  /// Waits until more than `frames` frames are written, the status version differs from
  /// `version`, or `timeout` passes; returns the status then. Wakes at end() too.
  Status wait(std::uint64_t frames, std::uint64_t version, std::chrono::milliseconds timeout);

  // --- The run's main thread ---------------------------------------------------------------
  /// Before each step, with the tick about to be computed from and the tick period: returns
  /// true at once when the run is neither paused nor paced; else waits while paused (a "step"
  /// lets one tick through) and holds the run to its speed. Returns false, without waiting
  /// more, when a request (take_requests()) comes while it waits: the caller lands it and calls
  /// again (with the tick then: a reset changes it), so that a paused run takes a move or a
  /// reset at once. Returns true early when `keep_going` turns false (checked every 200 ms:
  /// Ctrl-C on a paused run).
  bool before_step(Tick tick, SimTime tick_period_ns, const std::function<bool()>& keep_going);
  /// The requests made since the last call, in the order they came (at a tick boundary).
  /// Cheap when there are none.
  std::vector<Request> take_requests();
  /// What became of an intervention ("robot 3 moved ... at tick 12", "refused: ..."), for the
  /// pages; `landed` counts it.
  void report_intervention(const std::string& message, bool landed);
  /// The run has ended (`message`: "finished at tick T", an error): pages are told.
  void end(const std::string& message);
  /// On several processes (run thread): whether to ask every process for a whole frame
  /// (Simulation::request_whole_frame): while a page watches, at most held_fps a wall second,
  /// timed so that the frame, two ticks later (as long as the last tick), comes when held_fps
  /// allows the next held frame; never while none watches. Call once a tick.
  bool wants_whole_frame();
  /// When a page last asked for the status (steady clock), for lingering after the end.
  std::chrono::steady_clock::time_point last_poll() const;

 private:
  /// One frame as written: the columns' bytes copied one after the other into one buffer
  /// (one allocation, recycled once the frame is dropped), the tag table as a size (the table
  /// only grows, tag_tables_ holds it).
  struct Frame {
    Tick tick = 0;
    SimTime time_ns = 0;
    std::string status;
    std::size_t tag_table = 0;  ///< index into tag_tables_ (a new one at each reset)
    std::size_t tag_count = 0;
    std::size_t robot_count = 0, object_count = 0;
    std::vector<std::uint8_t> data;  ///< every column's bytes, robots' then objects'
    std::vector<std::size_t> robot_ends, object_ends;  ///< where each column ends in data
    /// write_blocks(): `data` is the frame log's payload, compressed (its head, then the
    /// blocks), of `raw_size` bytes once decompressed.
    bool packed = false;
    std::size_t raw_size = 0;
  };
  Status status_locked() const;
  /// Copies `v` into frames_ (run thread).
  void hold(const log::LogFrameView& v, std::chrono::steady_clock::time_point now);
  /// At full speed, a frame held less than a frame period ago (held_fps while a page watches,
  /// idle_held_fps otherwise): the next is not held. Never when paced, paused or stepped.
  bool held_too_recently(std::chrono::steady_clock::time_point now);
  /// A frame of `v`'s tick, time, status and counts (no data yet), noted as held at `now`.
  Frame begin_frame(const log::LogFrameView& v, std::chrono::steady_clock::time_point now);
  /// Appends `f` (its data filled) to frames_ with `tags`, dropping the oldest beyond the
  /// memory budget (run thread).
  void keep(Frame f, std::span<const std::string> tags);
  /// Recomputes `paced_` (under mutex_).
  void update_paced();

  Options options_;
  log::LogHeader header_;
  log::frame_format::PayloadLayout layout_;  ///< header_'s, for write_blocks() frames
  std::vector<std::string> addable_kinds_, addable_controllers_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  ///< a frame, a control, the end
  std::deque<Frame> frames_;         ///< the held frames, oldest first
  std::uint64_t first_frame_ = 0;    ///< index of frames_.front()
  std::size_t held_bytes_ = 0;
  /// The tag tables: one per start of the run (its beginning, then each reset); each only grows.
  std::vector<std::vector<std::string>> tag_tables_;
  bool begun_ = false;
  std::vector<std::vector<std::uint8_t>> spare_;  ///< dropped frames' buffers, for reuse
  bool paused_ = false;
  std::uint64_t steps_ = 0;  ///< ticks let through while paused
  double speed_ = 0;
  bool ended_ = false;
  std::vector<Request> requests_;               ///< requested, not taken yet
  std::map<std::uint32_t, std::string> looks_;  ///< answer_look(), by robot
  std::atomic<bool> has_requests_{false};       ///< requests_ is not empty (read without the mutex)
  std::string intervention_;
  std::uint64_t interventions_ = 0;
  std::string end_message_;
  std::uint64_t version_ = 0;
  // Pacing: tick `anchor_tick_` was started at wall time `anchor_`; reset by every change.
  bool anchored_ = false;
  Tick anchor_tick_ = 0;
  std::chrono::steady_clock::time_point anchor_;
  /// Paused, stepping or paced: before_step() has something to do. Read without the mutex
  /// on the run's thread, so that an unsteered run pays one load per tick.
  std::atomic<bool> paced_{false};
  // The run thread's own: which frames are held (write(), finish(), before_step()).
  bool held_any_ = false;
  Tick last_held_tick_ = 0;
  std::chrono::steady_clock::time_point last_held_at_;
  bool asked_any_ = false;  ///< wants_whole_frame() said yes once
  std::chrono::steady_clock::time_point last_asked_;
  std::chrono::steady_clock::time_point last_called_;  ///< wants_whole_frame(), once a tick
  /// A page that polled this recently is watching (its long polls come every second).
  static constexpr std::chrono::seconds kWatchedFor{3};
  log::LogFrameView last_view_;       ///< the last frame written, when skipped_
  bool skipped_ = false;              ///< last_view_ was skipped and its spans are still valid
  std::atomic<Tick> latest_tick_{0};  ///< of the last frame written
  mutable std::atomic<std::int64_t> last_poll_ns_{0};
};

}  // namespace fleetsim::view
