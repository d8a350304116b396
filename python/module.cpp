// fleetsim._core: the engine in a Python process (docs/python.md). An experiment is loaded,
// stepped and read in process; its state columns are numpy arrays over the engine's own
// memory (no copy); actuator command columns are writable, so a program sets commands between
// steps for robots whose controller is `external`. Logs (frames and DEECo) read into numpy
// arrays. The pure-Python part of the package (fleetsim/__init__.py) adds the sweeps.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "boundary.hpp"
#include "core/diagnostics.hpp"
#include "core/hash.hpp"
#include "fleetsim/federate.hpp"
#include "log/log_reader.hpp"
#include "plugins/builtins.hpp"
#include "scenario/experiment.hpp"
#include "sim/simulation.hpp"

namespace py = pybind11;

namespace fleetsim::python {
namespace {

py::dtype dtype_of(ColumnType t) {
  switch (t) {
    case ColumnType::kU8:
      return py::dtype::of<std::uint8_t>();
    case ColumnType::kU16:
      return py::dtype::of<std::uint16_t>();
    case ColumnType::kU32:
      return py::dtype::of<std::uint32_t>();
    case ColumnType::kI32:
      return py::dtype::of<std::int32_t>();
    case ColumnType::kF32:
      return py::dtype::of<float>();
    case ColumnType::kF64:
      return py::dtype::of<double>();
    case ColumnType::kColor:
      return py::dtype::of<std::uint8_t>();  // RGBA, one more axis
    case ColumnType::kTag:
      return py::dtype::of<std::uint32_t>();  // index into tags()
    case ColumnType::kString:
      break;
  }
  throw std::logic_error("a string column has no numpy type");
}

const char* type_name(ColumnType t) {
  switch (t) {
    case ColumnType::kU8:
      return "u8";
    case ColumnType::kU16:
      return "u16";
    case ColumnType::kU32:
      return "u32";
    case ColumnType::kI32:
      return "i32";
    case ColumnType::kF32:
      return "f32";
    case ColumnType::kF64:
      return "f64";
    case ColumnType::kColor:
      return "color";
    case ColumnType::kTag:
      return "tag";
    case ColumnType::kString:
      return "string";
  }
  return "?";
}

/// The shape of `rows` rows of a column: (rows,), (rows, width), and for colours one more
/// axis of 4 (RGBA).
std::vector<py::ssize_t> shape_of(const ColumnDesc& d, std::size_t rows) {
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(rows)};
  if (d.width > 1) shape.push_back(d.width);
  if (d.type == ColumnType::kColor) shape.push_back(4);
  return shape;
}

/// An array over `bytes` (a column's `rows` rows): a view kept alive by `base`, or a copy.
py::array column_array(const ColumnDesc& d, std::size_t rows, const void* bytes, py::handle base,
                       bool writable) {
  py::array a(dtype_of(d.type), shape_of(d, rows), {}, bytes, base);
  if (!writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

class PySimulation {
 public:
  PySimulation(const std::string& path, std::optional<int> threads,
               std::optional<std::uint64_t> seed, std::optional<double> length,
               std::optional<std::string> log, std::optional<std::string> log_format,
               std::optional<std::string> text) {
    check_overrides(threads, length);
    ExperimentOverrides o;
    o.threads = threads;
    o.seed = seed;
    o.length_s = length;
    if (log && !log->empty()) o.log_path = log;
    if (log_format) {
      if (*log_format == "frames")
        o.log_format = log::LogFormat::kFrames;
      else if (*log_format == "deeco")
        o.log_format = log::LogFormat::kDeeco;
      else
        throw py::value_error("log_format must be 'frames' or 'deeco', not '" + *log_format + "'");
    }
    registry_ = std::make_unique<PluginRegistry>();
    register_builtins(*registry_);
    Diagnostics d;
    // `text`: the experiment's XML as a string, its relative paths resolved against `path`'s
    // directory (sweeps fill in a template).
    auto ex = text ? parse_experiment(*text, path, *registry_, o, d)
                   : load_experiment(path, *registry_, o, d);
    if (!ex) throw ExperimentError(d.str());
    if (log && log->empty()) ex->logs.clear();  // log="": no log at all
    sim_ = std::make_unique<Simulation>(std::move(*ex), *registry_);
    // Views handed out stay readable (stale, never freed) when loop functions add robots.
    sim_->state_between_steps().robots.keep_replaced_buffers();
  }

  void start() {
    if (!started_) {
      started_ = true;
      sim_->start();
    }
  }

  /// Steps up to `ticks` ticks (fewer when the run ends); returns how many. Before each tick,
  /// every command column must hold finite numbers (ValueError naming the robot otherwise,
  /// before anything of the tick runs).
  std::int64_t step(std::int64_t ticks) {
    if (ticks < 0) throw py::value_error("ticks must be >= 0");
    live();
    start();
    std::int64_t done = 0;
    for (; done < ticks && !sim_->done(); ++done) {
      check_commands(*sim_, [this](const ColumnDesc& d) { return writable(d); });
      {
        // Other Python threads run meanwhile; any use of this simulation from them raises
        // (OneThreadAtATime) instead of reading or writing memory the step is changing.
        OneThreadAtATime stepping(busy_);
        py::gil_scoped_release free;
        sim_->step();
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C
    }
    return done;
  }

  py::dict run() {
    live();
    start();
    const auto t0 = std::chrono::steady_clock::now();
    const Tick first = sim_->state().tick;
    while (!sim_->done()) step(1);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    py::dict out = summary();
    out["wall_seconds"] = wall;
    out["ticks_run"] = sim_->state().tick - first;
    return out;
  }

  py::dict summary() const {
    not_stepping();
    py::dict s;
    s["experiment"] = sim_->model().name;
    s["seed"] = sim_->model().seed;
    s["tick"] = sim_->state().tick;
    s["time_s"] = time_s();
    s["robots"] = sim_->state().robot_count();
    s["robot_steps"] = sim_->robot_steps();
    s["status"] = sim_->state().status;
    s["state_hash"] = hash_hex();
    return s;
  }

  void finish() {
    not_stepping();
    if (sim_ && !finished_) {
      finished_ = true;
      sim_->finish();
    }
  }

  std::string hash_hex() const { return hex64(sim().state().hash()); }
  double time_s() const {
    return static_cast<double>(sim().state().tick * sim().model().tick_period_ns) / 1e9;
  }
  /// The run, for the bindings' properties; raises when another thread is stepping it.
  const Simulation& sim() const {
    not_stepping();
    return *sim_;
  }
  bool finished() const { return finished_; }

  /// Column `name` of every robot, over the engine's memory.
  py::array column(py::object self, const std::string& name) {
    not_stepping();
    const ColumnStore& store = sim_->state().robots;
    const ColumnHandle c = store.find(name);
    if (c == kNoColumn) throw py::key_error(unknown_column(name));
    const ColumnDesc& d = store.desc(c);
    if (d.type == ColumnType::kString)
      throw py::type_error("column '" + name + "' holds strings: use robot_names()");
    return column_array(d, store.rows(), store.data(c), self, writable(d));
  }

  /// Commands: the columns of actuator parts, and every `*_cmd` column (the body's speed_cmd
  /// and turn_cmd, the flyers' velocity_cmd, which their engine declares).
  bool writable(const ColumnDesc& d) const {
    const bool command = registry_->find(PluginKind::kActuator, d.owner) != nullptr ||
                         (d.name.size() > 4 && d.name.ends_with("_cmd"));
    return command && !finished_;
  }

  py::list columns() const {
    not_stepping();
    const ColumnStore& store = sim_->state().robots;
    py::list out;
    for (ColumnHandle c = 0; c < store.schema().size(); ++c) {
      const ColumnDesc& d = store.desc(c);
      py::dict e;
      e["name"] = d.name;
      e["type"] = type_name(d.type);
      e["width"] = d.width;
      e["owner"] = d.owner;
      e["logged"] = d.logged;
      e["writable"] = writable(d);
      e["doc"] = d.doc;
      out.append(e);
    }
    return out;
  }

  std::vector<std::string> robot_names() const {
    const auto names = sim().state().robot_name();
    return {names.begin(), names.end()};
  }
  std::vector<std::string> tags() const { return sim().state().tags.strings(); }

 private:
  void not_stepping() const { OneThreadAtATime::check(busy_); }
  void live() const {
    not_stepping();
    if (finished_)
      throw py::value_error("the simulation is finished (finish() or the end of a with block)");
  }
  std::string unknown_column(const std::string& name) const {
    std::vector<std::string> names;
    for (const auto& d : sim_->state().robots.schema()) names.push_back(d.name);
    return "no robot column '" + name +
           "' in this run (its columns: " + fmt::to_string(fmt::join(names, ", ")) + ")" +
           did_you_mean(name, names);
  }

  std::unique_ptr<PluginRegistry> registry_;
  std::unique_ptr<Simulation> sim_;
  bool started_ = false, finished_ = false;
  std::atomic<bool> busy_{false};  ///< a step() is running with the GIL released
};

/// A log (frames or DEECo) read into numpy arrays, frame by frame (copies).
class PyLog {
 public:
  explicit PyLog(const std::string& path) {
    try {
      reader_ = log::LogReader::open(path);
    } catch (const log::LogError& e) {
      throw ExperimentError(path + ": " + e.what());
    }
  }
  std::size_t frame_count() const { return reader_->frame_count(); }
  std::string format() const {
    return reader_->format() == log::LogFormat::kFrames ? "frames" : "deeco";
  }
  py::dict header() const {
    const log::LogHeader& h = reader_->header();
    py::dict d;
    d["experiment"] = h.experiment;
    d["seed"] = h.seed;
    d["tick_s"] = static_cast<double>(h.tick_period_ns) / 1e9;
    d["every"] = h.every;
    d["arena_size"] = py::make_tuple(h.arena_width_m, h.arena_height_m);
    d["arena_center"] = py::make_tuple(h.arena_center.x, h.arena_center.y);
    py::list kinds, shapes;
    for (const auto& k : h.kinds) {
      kinds.append(k.name);
      // The body's outline (a box's half extents along and across its heading) and its ray
      // sensors' geometry (the readings are the robot column `column`, one per angle).
      py::dict s;
      s["shape"] = k.shape == log::LogShape::kBox ? "box" : "circle";
      s["radius"] = k.radius_m;
      s["half_extents"] = k.shape == log::LogShape::kBox
                              ? py::object(py::make_tuple(k.half_length_m, k.half_width_m))
                              : py::object(py::none());
      py::list rays;
      for (const auto& r : k.rays) {
        py::dict ray;
        ray["column"] = r.column;
        ray["range"] = r.range_m;
        ray["angles"] = r.angles;
        rays.append(ray);
      }
      s["rays"] = rays;
      shapes.append(s);
    }
    d["kinds"] = kinds;
    d["kind_shapes"] = shapes;
    py::list robots;
    for (const auto& r : h.robots) robots.append(r.name);
    d["robots"] = robots;
    return d;
  }
  std::vector<std::string> columns() const {
    std::vector<std::string> out;
    for (const auto& c : reader_->header().robot_columns) out.push_back(c.name);
    return out;
  }
  /// Frame `index` (negative: from the end): tick, time, status, tags and every robot column.
  py::dict frame(std::int64_t index) {
    const auto n = static_cast<std::int64_t>(reader_->frame_count());
    if (index < 0) index += n;
    if (index < 0 || index >= n)
      throw py::index_error("frame " + std::to_string(index) + " of a log of " + std::to_string(n) +
                            " frames");
    log::LogFrame f;
    try {
      f = reader_->read_frame(static_cast<std::size_t>(index));
    } catch (const log::LogError& e) {
      throw ExperimentError(e.what());
    }
    py::dict d;
    d["tick"] = f.tick;
    d["time_s"] = static_cast<double>(f.time_ns) / 1e9;
    d["status"] = f.status;
    d["tags"] = f.tags;
    const auto& cols = reader_->header().robot_columns;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      py::array view =
          column_array(cols[c], f.robot_count, f.robot_columns[c].data(), py::none(), true);
      d[py::str(cols[c].name)] = view.attr("copy")();
    }
    return d;
  }

 private:
  std::unique_ptr<log::LogReader> reader_;
};

// A region from Python: {dimension: (lower, upper)}.
fleetsim::Region region_of(const py::dict& region) {
  fleetsim::Region out;
  for (const auto& [name, range] : region) {
    const auto bounds = range.cast<std::pair<double, double>>();
    out[name.cast<std::string>()] = {bounds.first, bounds.second};
  }
  return out;
}

py::object delivered_to_python(const Delivered& d) {
  static py::object type = py::module_::import("types").attr("SimpleNamespace");
  return type(py::arg("input") = d.input, py::arg("flow") = d.flow,
              py::arg("timestamp") = d.timestamp,
              py::arg("payload") =
                  py::bytes(reinterpret_cast<const char*>(d.payload.data()), d.payload.size()));
}

py::object grant_to_python(const Grant& g) {
  static py::object type = py::module_::import("types").attr("SimpleNamespace");
  py::list messages;
  for (const auto& m : g.messages) messages.append(delivered_to_python(m));
  return type(py::arg("time") = g.time, py::arg("messages") = messages, py::arg("done") = g.done);
}

std::vector<std::uint8_t> bytes_of(const py::bytes& b) {
  const std::string s = b;
  return {s.begin(), s.end()};
}

/// A typed flow's value from a dict {attribute: value}: bool, int or float by the Python type
/// (attributes not given stay 0). Unknown attributes and values out of range raise
/// FederateError naming the node, the flow and the timestamp.
std::vector<std::uint8_t> encode(const Federate& f, const std::string& output,
                                 const py::dict& values) {
  AttributeSet set = f.attributes(output);
  for (const auto& [key, value] : values) {
    const std::string name = py::str(key);
    if (py::isinstance<py::bool_>(value)) {
      set.set_bool(name, value.cast<bool>());
    } else if (py::isinstance<py::int_>(value)) {
      if (value.cast<py::int_>() < py::int_(0))
        set.set_signed(name, value.cast<std::int64_t>());
      else
        set.set_unsigned(name, value.cast<std::uint64_t>());
    } else if (py::isinstance<py::float_>(value)) {
      set.set(name, value.cast<double>());
    } else {
      throw py::type_error("attribute '" + name + "': expected a bool, an int or a float, got " +
                           std::string(py::str(value.get_type().attr("__name__"))));
    }
  }
  return set.bytes();
}

/// A payload given as bytes, or as a dict of attribute values for a typed output.
std::vector<std::uint8_t> payload_of(const Federate& f, const std::string& output,
                                     const py::object& payload) {
  if (py::isinstance<py::dict>(payload)) return encode(f, output, payload.cast<py::dict>());
  return bytes_of(payload.cast<py::bytes>());
}

/// A typed message as a dict {attribute: value}: float for f64/f32, bool for bool, int else.
py::dict decode(const Federate& f, const py::object& message) {
  Delivered d;
  d.input = message.attr("input").cast<std::string>();
  d.flow = py::hasattr(message, "flow") ? message.attr("flow").cast<std::string>() : "";
  d.timestamp = message.attr("timestamp").cast<SimTime>();
  d.payload = bytes_of(message.attr("payload").cast<py::bytes>());
  const AttributeSet set = f.decode(d);
  py::dict out;
  for (const auto& a : set.class_layout().attributes) {
    switch (a.type) {
      case AttributeType::kF64:
      case AttributeType::kF32:
        out[py::str(a.name)] = set.get(a.name);
        break;
      case AttributeType::kBool:
        out[py::str(a.name)] = set.get_bool(a.name);
        break;
      case AttributeType::kU64:
        out[py::str(a.name)] = set.get_unsigned(a.name);
        break;
      default:
        out[py::str(a.name)] = set.get_signed(a.name);
    }
  }
  return out;
}

/// A port's class: None for an untyped flow, else its name and attributes (name, type).
py::object class_of(const Federate& f, const std::string& port) {
  const ClassLayout* cls = f.data_class(port);
  if (!cls) return py::none();
  py::list attributes;
  for (const auto& a : cls->attributes)
    attributes.append(py::make_tuple(a.name, type_info(a.type).name));
  py::dict d;
  d["name"] = cls->name;
  d["interaction"] = cls->interaction;
  d["size"] = cls->size;
  d["attributes"] = attributes;
  return d;
}

}  // namespace
}  // namespace fleetsim::python

PYBIND11_MODULE(_core, m) {
  using namespace fleetsim::python;
  m.doc() = "fleetsim's engine in process (docs/python.md)";
  py::register_exception<ExperimentError>(m, "ExperimentError", PyExc_ValueError);
  py::register_exception<fleetsim::RunError>(m, "RunError", PyExc_RuntimeError);

  py::class_<PySimulation>(m, "Simulation",
                           "An experiment loaded in this process: step it, read its columns "
                           "(numpy views), set its robots' commands")
      .def(py::init<const std::string&, std::optional<int>, std::optional<std::uint64_t>,
                    std::optional<double>, std::optional<std::string>, std::optional<std::string>,
                    std::optional<std::string>>(),
           py::arg("path"), py::kw_only(), py::arg("threads") = py::none(),
           py::arg("seed") = py::none(), py::arg("length") = py::none(),
           py::arg("log") = py::none(), py::arg("log_format") = py::none(),
           py::arg("text") = py::none(),
           "Loads and checks the experiment file `path` (ExperimentError lists every problem). "
           "threads, seed, length (seconds), log (path; '' for none) and log_format ('frames' "
           "or 'deeco') override the file, as fleetsim run's options do. text: the file's XML "
           "as a string instead (relative paths still resolve against path's directory).")
      .def("step", &PySimulation::step, py::arg("ticks") = 1,
           "Simulates up to `ticks` ticks (fewer at the end of the run); returns how many. Every "
           "command column must hold finite numbers: ValueError names the robot and the column "
           "otherwise, before the tick runs. Other Python threads run meanwhile; their use of "
           "this simulation raises RuntimeError until it returns.")
      .def("run", &PySimulation::run,
           "Simulates to the end of the run; returns the summary, with wall_seconds.")
      .def("finish", &PySimulation::finish,
           "Ends the run: loop functions' destroy, logs completed. Idempotent.")
      .def(
          "column",
          [](py::object self, const std::string& name) {
            return self.cast<PySimulation&>().column(self, name);
          },
          py::arg("name"),
          "Robot column `name` as a numpy array over the engine's memory, one row per robot "
          "(rows in the engine's order: column('id') gives the ids). Writable for actuator "
          "commands (columns() says which). After robots are added or removed, get it again.")
      .def("columns", &PySimulation::columns,
           "Every robot column: name, type, width, owner (the part that declared it), logged, "
           "writable, doc.")
      .def("robot_names", &PySimulation::robot_names, "Every robot's id string, in row order.")
      .def("tags", &PySimulation::tags, "The run's tag strings: a 'tag' column holds indices.")
      .def_property_readonly(
          "tick", [](const PySimulation& s) { return s.sim().state().tick; },
          "Ticks simulated so far.")
      .def_property_readonly("time", &PySimulation::time_s, "Simulated seconds.")
      .def_property_readonly(
          "done", [](const PySimulation& s) { return s.sim().done(); },
          "True when the run has reached its length or its loop functions ended it.")
      .def_property_readonly(
          "length_ticks", [](const PySimulation& s) { return s.sim().model().length_ticks; },
          "The run's length in ticks (0: until the loop functions end it).")
      .def_property_readonly(
          "robot_count", [](const PySimulation& s) { return s.sim().state().robot_count(); },
          "Robots in the world now (rows of every column).")
      .def_property_readonly(
          "status", [](const PySimulation& s) { return s.sim().state().status; },
          "The loop functions' status text.")
      .def_property_readonly("state_hash", &PySimulation::hash_hex,
                             "The world's state hash, as fleetsim run --json prints it.")
      .def("summary", &PySimulation::summary,
           "experiment, seed, tick, time_s, robots, robot_steps, status, state_hash.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySimulation& s, py::args) { s.finish(); });

  py::register_exception<fleetsim::FederateError>(m, "FederateError", PyExc_RuntimeError);
  using fleetsim::Federate;
  using fleetsim::FederateOptions;
  using fleetsim::SimTime;
  py::class_<Federate>(m, "Federate",
                       "A node of a federation played by this program: time-advance and "
                       "next-event requests over DSAAM flows (docs/federate-api.md)")
      .def(py::init([](const std::string& federation, const std::string& name,
                       const std::string& ipc_dir, const std::string& trace_dir,
                       std::uint32_t jitter_us, const std::string& secret_keys_dir,
                       std::optional<SimTime> until, bool quiet, std::uint64_t run_id,
                       const std::string& transport) {
             FederateOptions o;
             o.run_id = run_id;
             o.transport = transport;
             o.ipc_dir = ipc_dir;
             o.trace_dir = trace_dir;
             o.jitter_us = jitter_us;
             o.secret_keys_dir = secret_keys_dir;
             o.until = until;
             o.quiet = quiet;
             return Federate(federation, name, o);
           }),
           py::arg("federation"), py::arg("name"), py::kw_only(), py::arg("ipc_dir") = "",
           py::arg("trace_dir") = "", py::arg("jitter_us") = 0, py::arg("secret_keys_dir") = "",
           py::arg("until") = py::none(), py::arg("quiet") = false, py::arg("run_id") = 0,
           py::arg("transport") = "auto",
           "Joins the federation file `federation` as node `name`, over shared memory "
           "(transport='shm', every node on this machine) or ZeroMQ ('zmq'); 'auto' picks shm "
           "when every endpoint is on this machine.")
      .def_static(
          "from_command_line",
          [](std::vector<std::string> argv) {
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            return Federate::from_command_line(static_cast<int>(argv.size()), args.data());
          },
          py::arg("argv"),
          "Joins as `fleetsim launch` asks a program node to: sys.argv is "
          "[PROGRAM, FEDERATION, '--name', NODE, options...].")
      .def_property_readonly("name", &Federate::name)
      .def_property_readonly("outputs", &Federate::outputs)
      .def_property_readonly("inputs", &Federate::inputs)
      .def_property_readonly("granted", &Federate::granted, "The last granted time, ns")
      .def_property_readonly("until", &Federate::until, "The federation's end time, ns")
      .def(
          "next_emission",
          [](const Federate& f, std::optional<std::string> output) {
            return output ? f.next_emission(*output) : f.next_emission();
          },
          py::arg("output") = py::none(),
          "The timestamp (ns) of the output's next message (of any output's without one).")
      .def(
          "update",
          [](Federate& f, const std::string& output, const py::object& payload) {
            f.update(output, payload_of(f, output, payload));
          },
          py::arg("output"), py::arg("payload"),
          "The bytes the output sends at its next timestamps, until changed; on a typed flow, "
          "bytes or a dict {attribute: value}.")
      .def(
          "set_emitter",
          [](Federate& f, const std::string& output, py::function fn) {
            const Federate* self = &f;
            f.set_emitter(
                output, [fn, self, output](SimTime t) { return payload_of(*self, output, fn(t)); });
          },
          py::arg("output"), py::arg("emitter"),
          "emitter(t) -> bytes (or a dict on a typed flow) computes the output's message when it "
          "is due.")
      .def(
          "send_event",
          [](Federate& f, const std::string& output, SimTime t, const py::object& payload) {
            f.send_event(output, t, payload_of(f, output, payload));
          },
          py::arg("output"), py::arg("t"), py::arg("payload"),
          "An event flow's message at t (ns); null messages fill the gaps (docs/federate-api.md).")
      .def(
          "encode",
          [](const Federate& f, const std::string& output, const py::dict& values) {
            const auto b = encode(f, output, values);
            return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
          },
          py::arg("output"), py::arg("values"),
          "A typed output's payload from a dict {attribute: value} (the others 0).")
      .def("decode", &decode, py::arg("message"),
           "A typed message's attributes as a dict {attribute: value}.")
      .def("data_class", &class_of, py::arg("port"),
           "The class of a port's flow: None when untyped, else a dict with its name, "
           "interaction, size (bytes) and attributes [(name, type), ...].")
      .def(
          "observe",
          [](Federate& f, const std::string& input) -> py::object {
            const auto d = f.observe(input);
            return d ? delivered_to_python(*d) : py::none();
          },
          py::arg("input"),
          "An observation flow's latest message stamped <= the federate's time, or None.")
      .def(
          "send_receive_order",
          [](Federate& f, const std::string& output, const py::object& payload) {
            f.send_receive_order(output, payload_of(f, output, payload));
          },
          py::arg("output"), py::arg("payload"),
          "A receive-order flow's message, sent now, outside time management; not repeatable.")
      .def(
          "arrived",
          [](Federate& f, const std::string& input) {
            py::list out;
            for (const auto& d : f.arrived(input)) out.append(delivered_to_python(d));
            return out;
          },
          py::arg("input"),
          "A receive-order flow's messages that have arrived since the last call, in the order "
          "sent, without waiting (timestamp: the sender's time when it sent).")
      .def(
          "set_update_region",
          [](Federate& f, const std::string& output, const py::dict& region) {
            f.set_update_region(output, region_of(region));
          },
          py::arg("output"), py::arg("region"),
          "The region {dimension: (lower, upper)} attached to the output's messages from now on "
          "(docs/federate-api.md, \"Regions\").")
      .def(
          "subscribe_region",
          [](Federate& f, const std::string& input, const std::optional<py::dict>& region,
             SimTime from) {
            f.subscribe_region(input, region ? std::optional(region_of(*region)) : std::nullopt,
                               from);
          },
          py::arg("input"), py::arg("region"), py::arg("from_time"),
          "From from_time (ns, after the federate's time), deliver only the input's messages "
          "whose region overlaps {dimension: (lower, upper)}; None: all of them.")
      .def(
          "set_message_handler",
          [](Federate& f, py::function fn) {
            f.set_message_handler(
                [fn](const fleetsim::Delivered& d) { fn(delivered_to_python(d)); });
          },
          py::arg("handler"),
          "handler(message) gets each message (input, flow, timestamp, payload) as it "
          "arrives, in time-stamp order, instead of the grants.")
      .def(
          "time_advance_request",
          [](Federate& f, SimTime t) { return grant_to_python(f.time_advance_request(t)); },
          py::arg("t"), "Sends and receives everything stamped <= t; grants t.")
      .def(
          "next_event_request",
          [](Federate& f, SimTime t) { return grant_to_python(f.next_event_request(t)); },
          py::arg("t"),
          "Grants the time of the earliest messages stamped <= t (delivering them), or t.")
      .def(
          "run",
          [](Federate& f, py::function fn) {
            f.run([fn](const fleetsim::Delivered& d) { fn(delivered_to_python(d)); });
          },
          py::arg("on_message"), "To the end time, each message to on_message.")
      .def("resign", &Federate::resign, "Leaves the federation (what was sent is delivered).")
      .def_property_readonly("consumed", &Federate::consumed)
      .def_property_readonly("emitted", &Federate::emitted)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Federate& f, py::args) { f.resign(); });

  bind_worlds(m);

  py::class_<PyLog>(m, "Log", "A frame log or DEECo log, read frame by frame into numpy arrays")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("__len__", &PyLog::frame_count)
      .def_property_readonly("format", &PyLog::format)
      .def_property_readonly("header", &PyLog::header)
      .def_property_readonly("columns", &PyLog::columns)
      .def("frame", &PyLog::frame, py::arg("index"),
           "Frame `index` (negative counts from the end): tick, time_s, status, tags and "
           "every logged robot column as a numpy array (a copy).")
      .def("__getitem__", &PyLog::frame);
}
