#include "federation/federation_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/xml_reader.hpp"
#include "transport/curve.hpp"

namespace fleetsim::federation {

namespace {

const std::vector<std::string> kKinds = {"mixer", "dynamics", "controller", "camera"};
const std::vector<std::string> kFlowKinds = {"periodic", "event", "observation", "receive-order"};

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Reads a duration attribute; reports a bad value and returns nullopt.
std::optional<SimTime> duration_attr(XmlElement& e, const char* attr,
                                     std::optional<SimTime> fallback, bool required) {
  if (!e.has(attr)) {
    if (required)
      e.error(fmt::format("<{}> needs attribute '{}' (a duration such as 10ms)", e.name(), attr));
    e.accept(attr);
    return fallback;
  }
  std::string raw = e.text(attr);
  auto v = parse_duration(raw);
  if (!v)
    e.error(
        fmt::format("attribute '{}' of <{}> is '{}' (expected a duration: an integer or "
                    "decimal number with a unit ns, us, ms or s, e.g. 10ms)",
                    attr, e.name(), raw));
  return v;
}

// Checks an endpoint's syntax; returns an error message or "".
std::string endpoint_problem(const std::string& e, std::size_t links) {
  if (e.rfind("ipc://", 0) == 0) {
    if (e.size() <= 6) return "ipc:// needs a path";
    if (e.size() > 90) return "ipc path too long (at most 90 characters)";
    return "";
  }
  if (e.rfind("tcp://", 0) == 0) {
    auto colon = e.rfind(':');
    if (colon <= 5 || colon + 1 >= e.size()) return "tcp:// needs host:port";
    std::string port = e.substr(colon + 1);
    if (!std::all_of(port.begin(), port.end(), [](char c) { return std::isdigit(c); }) ||
        port.size() > 5)
      return "port '" + port + "' is not a number";
    int p = std::stoi(port);
    if (p < 1 || p + static_cast<int>(links) > 65536)
      return fmt::format(
          "port {} out of range (the node uses ports {}..{}, one per feeding "
          "node; expected 1..65535)",
          p, p, p + static_cast<int>(links) - 1);
    return "";
  }
  return "unknown scheme (expected tcp://host:port or ipc://path)";
}

// A circuit of event flows with lookahead 0 deadlocks: each node's output at T waits until
// its inputs at T are consumed, which wait for the next node's output at T, and so on round
// the circuit. Reports one circuit per strongly connected set of nodes linked by such flows,
// naming its nodes and flows in order, at the line of its first flow.
void report_zero_lookahead_circuits(const Federation& fed, Diagnostics& diags) {
  const std::size_t n = fed.nodes.size();
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> zero(n);  // (sink, flow)
  for (std::size_t k = 0; k < fed.flows.size(); ++k) {
    const FlowDecl& f = fed.flows[k];
    if (!f.source_known || f.kind != transport::FlowKind::kEvent || f.lookahead != 0) continue;
    for (const auto& sink : f.sinks) zero[f.source_node].emplace_back(sink.first, k);
  }
  // reach[a][b]: b can be reached from a through zero-lookahead flows.
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (std::size_t a = 0; a < n; ++a)
    for (const auto& [b, flow] : zero[a]) reach[a][b] = true;
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t a = 0; a < n; ++a)
      if (reach[a][k])
        for (std::size_t b = 0; b < n; ++b)
          if (reach[k][b]) reach[a][b] = true;
  std::vector<bool> reported(n, false);
  for (std::size_t v = 0; v < n; ++v) {
    if (reported[v] || !reach[v][v]) continue;
    for (std::size_t w = 0; w < n; ++w)
      if (reach[v][w] && reach[w][v]) reported[w] = true;
    // The shortest circuit through v: breadth first, within v's strongly connected set.
    std::vector<std::optional<std::pair<std::size_t, std::size_t>>> from(n);  // (node, flow)
    std::vector<std::size_t> queue{v};
    std::optional<std::pair<std::size_t, std::size_t>> closing;
    for (std::size_t q = 0; q < queue.size() && !closing; ++q)
      for (const auto& [b, flow] : zero[queue[q]]) {
        if (b == v) {
          closing = std::make_pair(queue[q], flow);
          break;
        }
        if (!from[b] && reach[b][v]) {
          from[b] = std::make_pair(queue[q], flow);
          queue.push_back(b);
        }
      }
    // Walk back from the closing flow to v, then print v, flow, node, flow, ..., v.
    if (!closing) continue;
    std::vector<std::pair<std::size_t, std::size_t>> steps;  // (node, flow leaving it)
    for (auto at = closing; at; at = at->first == v ? std::nullopt : from[at->first])
      steps.insert(steps.begin(), *at);
    std::string path;
    for (const auto& [node, flow] : steps)
      path += fmt::format("node '{}', flow '{}', ", fed.nodes[node].name, fed.flows[flow].name);
    diags.error(fed.flows[steps.front().second].where,
                fmt::format("a circuit of zero-lookahead flows would deadlock: {}back to node "
                            "'{}' (each node's output at a timestamp T waits for its inputs at "
                            "T; expected a lookahead > 0 on at least one of these flows)",
                            path, fed.nodes[v].name));
  }
}

// An optional node may join late and resign early without changing what the others compute:
// it only samples (its inputs are observation flows, which never hold their sources back) and
// only optional nodes read what it sends. Reports every flow that breaks this, at its line.
void report_optional_nodes(const Federation& fed, Diagnostics& diags) {
  for (const auto& f : fed.flows) {
    if (!f.source_known) continue;
    const NodeDecl& src = fed.nodes[f.source_node];
    for (const auto& [sn, si] : f.sinks) {
      const NodeDecl& sink = fed.nodes[sn];
      if (src.optional && !sink.optional)
        diags.error(f.where,
                    fmt::format("flow '{}' goes from optional node '{}' to node '{}', which is "
                                "not optional (expected only optional nodes to read an optional "
                                "node: the others must compute the same without it)",
                                f.name, src.name, sink.name));
      else if (sink.optional && f.kind != transport::FlowKind::kObservation)
        diags.error(f.where,
                    fmt::format("flow '{}' feeds optional node '{}' as {} flow (expected "
                                "kind=\"observation\": an optional node samples its inputs, "
                                "so that no source ever waits for it)",
                                f.name, sink.name,
                                f.kind == transport::FlowKind::kEvent      ? "an event"
                                : f.kind == transport::FlowKind::kPeriodic ? "a periodic"
                                                                           : "a receive-order"));
    }
  }
}

// Reads the <class> and <interaction> elements: attribute names and types, in order.
void parse_classes(XmlElement& root, Federation& fed, Diagnostics& diags) {
  std::vector<std::string> type_names;
  for (const auto& t : kAttributeTypes) type_names.emplace_back(t.name);
  std::set<std::string> class_names;
  for (auto& ce : root.children()) {
    const std::string element = ce.name();
    if (element != "class" && element != "interaction") continue;
    auto cls = std::make_shared<ClassLayout>();
    cls->interaction = element == "interaction";
    cls->name = ce.text("name", "", true);
    ce.finish();
    ce.check_children({"attribute"});
    if (ce.has("name") && !valid_name(cls->name))
      ce.error(fmt::format("{} name '{}' is not valid (expected letters, digits, '_' or '-')",
                           element, cls->name));
    if (!cls->name.empty() && !class_names.insert(cls->name).second)
      ce.error(
          fmt::format("a class or interaction called '{}' already exists (expected unique "
                      "names)",
                      cls->name));
    for (auto& ae : ce.children("attribute")) {
      const std::string name = ae.text("name", "", true);
      const std::string type = ae.choice("type", type_names, "", true);
      ae.finish();
      if (ae.has("name") && !valid_name(name))
        ae.error(
            fmt::format("attribute name '{}' is not valid (expected letters, digits, '_' "
                        "or '-')",
                        name));
      if (!name.empty() && cls->find(name))
        ae.error(
            fmt::format("{} '{}' already has an attribute '{}' (expected unique attribute "
                        "names)",
                        element, cls->name, name));
      for (const auto& t : kAttributeTypes)
        if (type == t.name && !name.empty()) cls->add(name, t.type);
    }
    if (ce.children("attribute").empty())
      ce.error(
          fmt::format("{} '{}' has no <attribute> (expected at least one, e.g. <attribute "
                      "name=\"x\" type=\"f64\"/>)",
                      element, cls->name));
    if (!cls->name.empty()) fed.classes.push_back(std::move(cls));
  }
}

// Reads the <dimension> elements: names and ranges.
void parse_dimensions(XmlElement& root, Federation& fed) {
  for (auto& de : root.children("dimension")) {
    DimensionDecl d;
    d.where = de.where();
    d.name = de.text("name", "", true);
    d.lower = de.real("lower", d.lower);
    d.upper = de.real("upper", d.upper);
    de.finish();
    if (de.has("name") && !valid_name(d.name))
      de.error(
          fmt::format("dimension name '{}' is not valid (expected letters, digits, '_' or "
                      "'-')",
                      d.name));
    bool fresh = !d.name.empty();
    for (const auto& other : fed.dimensions)
      if (other.name == d.name && fresh) {
        de.error(
            fmt::format("a dimension called '{}' already exists (expected unique names)", d.name));
        fresh = false;
      }
    if (!(d.lower < d.upper))
      de.error(fmt::format("dimension '{}' has lower {} >= upper {} (expected lower < upper)",
                           d.name, d.lower, d.upper));
    if (fresh) fed.dimensions.push_back(std::move(d));
  }
}

// The nodes at either end of flow `f` that are not programs (federates), source first.
std::vector<std::string> nodes_not_programs(const Federation& fed, const FlowDecl& f) {
  std::vector<std::string> out;
  if (fed.nodes[f.source_node].kind != NodeKind::kProgram)
    out.push_back(fed.nodes[f.source_node].name);
  for (const auto& s : f.sinks)
    if (fed.nodes[s.first].kind != NodeKind::kProgram) out.push_back(fed.nodes[s.first].name);
  return out;
}

// A time-managed flow's schedule: its periods (periodic and observation flows) or its
// lookahead (event flows), and the timestamp of its first message.
void parse_schedule(XmlElement& fe, const std::string& kind, FlowDecl& f) {
  const bool event = f.kind == transport::FlowKind::kEvent;
  if (fe.has("lookahead")) {
    const std::string raw = fe.text("lookahead");
    const auto v = parse_duration(raw);
    if (!event)
      fe.error(fmt::format(
          "attribute 'lookahead' of flow '{}' means nothing on a {} flow (its period is its "
          "lookahead; expected kind=\"event\" with a lookahead, or no lookahead)",
          f.name, kind));
    else if (raw.find('-') != std::string::npos)
      fe.error(
          fmt::format("lookahead '{}' of flow '{}' is negative (expected a duration >= 0, "
                      "e.g. 5ms or 0)",
                      raw, f.name));
    else if (!v)
      fe.error(
          fmt::format("lookahead '{}' of flow '{}' is not a duration (expected an integer "
                      "or decimal number with a unit ns, us, ms or s, e.g. 5ms, or 0)",
                      raw, f.name));
    else
      f.lookahead = *v;
  } else if (event) {
    fe.accept("lookahead");
    fe.error(
        fmt::format("event flow '{}' needs attribute 'lookahead' (how much later than a "
                    "message the next may come at the earliest: a duration >= 0, e.g. "
                    "5ms, or 0 for a source that reacts at the same timestamp)",
                    f.name));
  }
  if (event) {
    if (fe.has("period"))
      fe.error(
          fmt::format("event flow '{}' has a 'period' (expected none: its source picks "
                      "each next timestamp, at least 'lookahead' later)",
                      f.name));
    fe.accept("period");
  } else if (!fe.has("period")) {
    fe.accept("period");
    fe.error(
        "<flow> needs attribute 'period' (a duration such as 10ms, or several used in "
        "turn: '33ms 33ms 34ms')");
  } else {
    std::string raw = fe.text("period");
    auto parts = split_list(raw);
    if (parts.empty()) fe.error("attribute 'period' of <flow> is empty (expected a duration)");
    for (const auto& p : parts) {
      auto v = parse_duration(p);
      if (!v || *v <= 0) {
        fe.error(
            fmt::format("period '{}' of flow '{}' is not a positive duration (expected "
                        "e.g. 10ms; a period of 0 would never advance time)",
                        p, f.name));
        continue;
      }
      f.periods.push_back(*v);
    }
  }
  f.initial = duration_attr(fe, "initial", 0, false).value_or(0);
}

// Reads a flow's dimensions="..." (regions, data distribution management): names of
// <dimension>s, on a periodic or event flow between federates.
void parse_flow_dimensions(XmlElement& fe, const Federation& fed, bool ends_known, FlowDecl& f) {
  if (!fe.has("dimensions")) return;
  const std::string raw = fe.text("dimensions");
  std::vector<std::string> names;
  for (const auto& d : fed.dimensions) names.push_back(d.name);
  const auto parts = split_list(raw);
  if (parts.empty())
    fe.error(
        fmt::format("attribute 'dimensions' of flow '{}' is empty (expected the names of "
                    "one or more <dimension>s)",
                    f.name));
  for (const auto& p : parts) {
    const auto it = std::find(names.begin(), names.end(), p);
    if (it == names.end()) {
      fe.error(fmt::format(
          "flow '{}': unknown dimension '{}' (expected a <dimension> of the "
          "file{}){}",
          f.name, p, names.empty() ? ": it has none" : fmt::format(": {}", fmt::join(names, ", ")),
          did_you_mean(p, names)));
      continue;
    }
    const auto index = static_cast<std::size_t>(it - names.begin());
    if (std::find(f.dimensions.begin(), f.dimensions.end(), index) != f.dimensions.end())
      fe.error(fmt::format("flow '{}' names dimension '{}' twice", f.name, p));
    else
      f.dimensions.push_back(index);
  }
  if (f.kind == transport::FlowKind::kObservation || f.kind == transport::FlowKind::kReceiveOrder)
    fe.error(fmt::format(
        "flow '{}' has regions ('dimensions') but is {} flow (expected a "
        "periodic or event flow: a region filters the messages a sink takes in "
        "time-stamp order)",
        f.name,
        f.kind == transport::FlowKind::kObservation ? "an observation" : "a receive-order"));
  if (!ends_known) return;
  if (const auto not_programs = nodes_not_programs(fed, f); !not_programs.empty())
    fe.error(
        fmt::format("flow '{}' has regions ('dimensions') but links node '{}', which is not "
                    "a program (expected federates at both ends: they attach and subscribe "
                    "to regions)",
                    f.name, fmt::join(not_programs, "', '")));
}

// The names of `cls`'s attributes, for "did you mean".
std::vector<std::string> attribute_names(const ClassLayout& cls) {
  std::vector<std::string> names;
  for (const auto& a : cls.attributes) names.push_back(a.name);
  return names;
}

// Why two classes differ, for a publisher/subscriber mismatch: their first attribute of
// another name or type, or their sizes.
std::string class_difference(const ClassLayout& a, const ClassLayout& b) {
  for (std::size_t k = 0; k < std::min(a.attributes.size(), b.attributes.size()); ++k) {
    const auto &x = a.attributes[k], &y = b.attributes[k];
    if (x.name != y.name)
      return fmt::format("attribute {} is '{}' in '{}' and '{}' in '{}'", k + 1, x.name, a.name,
                         y.name, b.name);
    if (x.type != y.type)
      return fmt::format("attribute '{}' is {} in '{}' and {} in '{}'", x.name,
                         type_info(x.type).name, a.name, type_info(y.type).name, b.name);
  }
  return fmt::format("'{}' has {} attributes, '{}' {}", a.name, a.attributes.size(), b.name,
                     b.attributes.size());
}

// Reads the modifiers of a flow (<noise>, <downsample>, <frame>), in order.
void parse_modifiers(XmlElement& fe, FlowDecl& f, Diagnostics& diags) {
  fe.check_children({"noise", "downsample", "frame"});
  for (auto& me : fe.children()) {
    const std::string element = me.name();
    if (element != "noise" && element != "downsample" && element != "frame") continue;
    ModifierDecl m;
    m.where = me.where();
    // A numeric attribute of the class, by name; reports and returns nullopt otherwise.
    auto attribute = [&](const std::string& name, bool need_f64) -> std::optional<std::size_t> {
      const ClassLayout& cls = *f.data_class;
      const auto* a = cls.find(name);
      if (!a) {
        me.error(fmt::format("class '{}' of flow '{}' has no attribute '{}'{}", cls.name, f.name,
                             name, did_you_mean(name, attribute_names(cls))));
        return std::nullopt;
      }
      if (!type_info(a->type).numeric || (need_f64 && a->type != AttributeType::kF64)) {
        me.error(fmt::format("<{}> on attribute '{}' of class '{}', which is {} (expected {})",
                             element, name, cls.name, type_info(a->type).name,
                             need_f64 ? "f64: coordinates need its precision"
                                      : "a numeric attribute: f64, f32 or an integer type"));
        return std::nullopt;
      }
      return static_cast<std::size_t>(a - cls.attributes.data());
    };
    if (element == "noise") {
      m.kind = ModifierDecl::Kind::kNoise;
      const std::string name = me.text("attribute", "", true);
      m.sigma = me.real("sigma", 0, 0);
      m.bias = me.real("bias", 0);
      if (!me.has("sigma") && !me.has("bias"))
        me.error("<noise> needs 'sigma' or 'bias' (or both: a value gets bias + sigma * N(0, 1))");
      if (f.kind == transport::FlowKind::kReceiveOrder)
        me.error(fmt::format(
            "<noise> on receive-order flow '{}' (noise is drawn by the message's timestamp, and "
            "its messages have none; expected a periodic, event or observation flow)",
            f.name));
      me.finish();
      if (!f.data_class || name.empty()) {
      } else if (auto a = attribute(name, false)) {
        m.attributes.push_back(*a);
      }
    } else if (element == "downsample") {
      m.kind = ModifierDecl::Kind::kDownsample;
      m.every = static_cast<std::uint64_t>(me.integer("every", 1, 1, 1'000'000'000, true));
      me.finish();
      if (f.kind == transport::FlowKind::kReceiveOrder)
        me.error(fmt::format(
            "<downsample> on receive-order flow '{}' (which messages it keeps would depend on "
            "the order they arrive in; expected a periodic or event flow)",
            f.name));
      else if (f.kind == transport::FlowKind::kObservation)
        me.error(
            fmt::format("<downsample> on observation flow '{}' (its sinks already read only "
                        "the latest value; expected a periodic or event flow)",
                        f.name));
    } else {
      m.kind = ModifierDecl::Kind::kFrame;
      const std::string to = me.choice("to", {"wgs84", "enu"}, "", true);
      m.to_wgs84 = to != "enu";
      const std::string names = me.text("attributes", "", true);
      m.reference.latitude_deg = me.real("latitude", 0, -90, 90, true);
      m.reference.longitude_deg = me.real("longitude", 0, -180, 180, true);
      m.reference.altitude_m = me.real("altitude", 0, -1e5, 1e7);
      me.finish();
      const auto parts = split_list(names);
      if (me.has("attributes") && parts.size() != 3)
        me.error(
            fmt::format("attribute 'attributes' of <frame> names {} attributes (expected "
                        "three: {})",
                        parts.size(),
                        m.to_wgs84 ? "east north up, in metres"
                                   : "latitude longitude (degrees) altitude (metres)"));
      else if (std::set<std::string>(parts.begin(), parts.end()).size() != parts.size())
        me.error(
            fmt::format("attribute 'attributes' of <frame> is '{}' (expected three "
                        "different attributes)",
                        names));
      else if (f.data_class)
        for (const auto& p : parts)
          if (auto a = attribute(p, true)) m.attributes.push_back(*a);
    }
    if (!f.data_class) {
      me.error(
          fmt::format("<{}> on untyped flow '{}' (expected its output or inputs to name a "
                      "class, e.g. <output name=\"...\" class=\"Pose\"/>)",
                      element, f.name));
      continue;
    }
    f.modifiers.push_back(std::move(m));
  }
}

}  // namespace

std::optional<SimTime> parse_duration(const std::string& text) {
  std::string s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  if (s == "0") return 0;
  static const std::pair<const char*, SimTime> kUnits[] = {
      {"ns", 1}, {"us", 1000}, {"ms", 1'000'000}, {"s", 1'000'000'000}};
  for (const auto& [suffix, scale] : kUnits) {
    std::string u = suffix;
    if (s.size() <= u.size() || s.compare(s.size() - u.size(), u.size(), u) != 0) continue;
    std::string num = s.substr(0, s.size() - u.size());
    // "ms" also ends in "s": the number part must then be all digits and dots.
    auto dot = num.find('.');
    std::string whole = num.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : num.substr(dot + 1);
    auto digits = [](const std::string& d) {
      return std::all_of(d.begin(), d.end(), [](char c) { return std::isdigit(c); });
    };
    if (whole.empty() || !digits(whole) || !digits(frac) ||
        (dot != std::string::npos && frac.empty()))
      continue;
    if (whole.size() > 12 || frac.size() > 9) return std::nullopt;
    SimTime v = std::stoll(whole) * scale;
    SimTime f = 0, div = 1;
    for (char c : frac) {
      f = f * 10 + (c - '0');
      div *= 10;
    }
    if ((f * scale) % div != 0) return std::nullopt;  // not a whole number of ns
    return v + f * scale / div;
  }
  return std::nullopt;
}

const NodeDecl* Federation::find(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::size_t Federation::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return i;
  throw std::logic_error("federation: unknown node '" + name + "'");
}

const FlowDecl& Federation::flow_into(std::size_t node, std::size_t input) const {
  for (const auto& f : flows)
    for (const auto& s : f.sinks)
      if (s.first == node && s.second == input) return f;
  throw std::logic_error("federation: input without a flow");
}

const FlowDecl& Federation::flow_from(std::size_t node, std::size_t output) const {
  for (const auto& f : flows)
    if (f.source_node == node && f.source_output == output) return f;
  throw std::logic_error("federation: output without a flow");
}

transport::FederationLayout Federation::layout() const {
  transport::FederationLayout layout;
  layout.until = until;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    transport::NodeLayout nl;
    nl.name = nodes[n].name;
    nl.endpoint = nodes[n].endpoint;
    nl.public_key = nodes[n].public_key;
    nl.optional = nodes[n].optional;
    for (std::size_t i = 0; i < nodes[n].inputs.size(); ++i) {
      const FlowDecl& f = flow_into(n, i);
      auto id = static_cast<transport::FlowId>(&f - flows.data());
      // Their sources never wait for the sinks (unless this far behind).
      const bool observation = f.kind == transport::FlowKind::kObservation ||
                               f.kind == transport::FlowKind::kReceiveOrder;
      nl.inputs.push_back({id, f.name, nodes[f.source_node].name,
                           observation ? kObservationBuffer : nodes[n].inputs[i].buffer, f.initial,
                           f.kind, f.lookahead});
    }
    for (std::size_t o = 0; o < nodes[n].outputs.size(); ++o) {
      const FlowDecl& f = flow_from(n, o);
      auto id = static_cast<transport::FlowId>(&f - flows.data());
      transport::OutputLink out{id, f.name, {}, f.initial, f.kind, f.lookahead};
      // Optional sinks read the flow's tap: the transport never links to them.
      for (const auto& [sn, si] : f.sinks) {
        if (nodes[sn].optional)
          out.tapped = true;
        else
          out.sinks.push_back(nodes[sn].name);
      }
      nl.outputs.push_back(std::move(out));
    }
    layout.nodes.push_back(std::move(nl));
  }
  return layout;
}

std::optional<Federation> parse_federation_file(const XmlFile& file, Diagnostics& diags);

std::optional<Federation> load_federation(const std::string& path, Diagnostics& diags) {
  auto file = XmlFile::load(path, diags);
  if (!file) return std::nullopt;
  return parse_federation_file(*file, diags);
}

std::optional<Federation> parse_federation(const std::string& text, const std::string& name,
                                           Diagnostics& diags) {
  auto file = XmlFile::parse(text, name, diags);
  if (!file) return std::nullopt;
  return parse_federation_file(*file, diags);
}

std::optional<Federation> parse_federation_file(const XmlFile& file, Diagnostics& diags) {
  Federation fed;
  fed.path = file.path();
  XmlElement root(file, file.root(), diags);
  if (std::string(root.name()) != "federation") {
    root.error(fmt::format("root element is <{}> (expected <federation>)", root.name()));
    return std::nullopt;
  }
  root.check_children({"node", "flow", "authentication", "class", "interaction", "dimension"});
  fed.until = duration_attr(root, "until", 0, true).value_or(0);
  if (root.has("until") && fed.until <= 0 && parse_duration(root.text("until")))
    root.error("attribute 'until' of <federation> must be positive (the end time, e.g. 2s)");
  fed.seed = static_cast<std::uint64_t>(root.integer("seed", 1, 0));
  auto default_buffer = static_cast<std::size_t>(root.integer("buffer", 16, 1, 1 << 20));
  root.finish();
  parse_classes(root, fed, diags);
  parse_dimensions(root, fed);
  std::vector<std::string> class_names;
  for (const auto& c : fed.classes) class_names.push_back(c->name);
  auto find_class = [&](const std::string& name) -> std::shared_ptr<const ClassLayout> {
    for (const auto& c : fed.classes)
      if (c->name == name) return c;
    return nullptr;
  };

  // Nodes and their ports.
  std::map<std::string, std::size_t> node_index;
  for (auto& ne : root.children("node")) {
    NodeDecl n;
    n.where = ne.where();
    ne.check_children({"input", "output"});
    n.name = ne.text("name", "", true);
    if (ne.has("name") && !valid_name(n.name))
      ne.error(fmt::format("node name '{}' is not valid (expected letters, digits, '_' or '-')",
                           n.name));
    if (static_cast<int>(ne.has("program")) + static_cast<int>(ne.has("kind")) +
            static_cast<int>(ne.has("experiment")) >
        1)
      ne.error(
          "<node> has more than one of 'kind', 'program' and 'experiment' (expected one: a "
          "built-in simulator, an external program or a swarm experiment)");
    if (ne.has("experiment")) {
      n.kind = NodeKind::kSwarm;
      n.experiment = file.resolve(ne.text("experiment"));
      n.kind_name = "swarm";
      ne.accept("kind");
      ne.accept("program");
    } else if (ne.has("program")) {
      n.kind = NodeKind::kProgram;
      n.program = file.resolve(ne.text("program"));
      n.kind_name = "program";
      ne.accept("kind");
    } else {
      n.kind_name = ne.choice("kind", kKinds, "mixer");
      n.kind = n.kind_name == "dynamics"     ? NodeKind::kDynamics
               : n.kind_name == "controller" ? NodeKind::kController
               : n.kind_name == "camera"     ? NodeKind::kCamera
                                             : NodeKind::kMixer;
    }
    n.endpoint = ne.text("endpoint");
    n.processes = static_cast<int>(ne.integer("processes", 1, 1, kMaxSwarmProcesses));
    if (ne.has("processes") && n.kind != NodeKind::kSwarm)
      ne.error(
          fmt::format("attribute 'processes' is for swarm nodes only (expected a node with an "
                      "'experiment', whose run it spreads over processes; node '{}' is a {})",
                      n.name, n.kind == NodeKind::kProgram ? "program" : "built-in simulator"));
    n.optional = ne.choice("optional", {"true", "false"}, "false") == "true";
    if (n.optional && n.kind != NodeKind::kProgram)
      ne.error(
          fmt::format("node '{}' is optional but not a program (expected optional=\"true\" "
                      "on a federate, a node with program=\"...\")",
                      n.name));
    ne.finish();
    std::set<std::string> port_names;
    for (auto& pe : ne.children()) {
      std::string element = pe.name();
      if (element != "input" && element != "output") continue;
      PortDecl p;
      p.where = pe.where();
      p.name = pe.text("name", "", true);
      if (pe.has("name") && !valid_name(p.name))
        pe.error(fmt::format("port name '{}' is not valid (expected letters, digits, '_' or '-')",
                             p.name));
      if (!p.name.empty() && !port_names.insert(p.name).second)
        pe.error(
            fmt::format("node '{}' already has a port called '{}' (expected unique input "
                        "and output names)",
                        n.name, p.name));
      bool input = std::string(pe.name()) == "input";
      if (input)
        p.buffer = static_cast<std::size_t>(pe.integer("buffer", default_buffer, 1, 1 << 20));
      p.robot = pe.text("robot");
      if (pe.has("robot") && n.kind != NodeKind::kSwarm)
        pe.error(
            "attribute 'robot' is for the ports of swarm nodes only (expected a node "
            "with an 'experiment')");
      p.class_name = pe.text("class");
      if (pe.has("class") && !find_class(p.class_name))
        pe.error(
            fmt::format("unknown class '{}' on {} '{}.{}' (expected a <class> or "
                        "<interaction> of the file){}",
                        p.class_name, input ? "input" : "output", n.name, p.name,
                        did_you_mean(p.class_name, class_names)));
      pe.finish();
      (input ? n.inputs : n.outputs).push_back(std::move(p));
    }
    if (!n.name.empty() && !node_index.emplace(n.name, fed.nodes.size()).second)
      ne.error(
          fmt::format("a node called '{}' already exists (expected unique node names)", n.name));
    fed.nodes.push_back(std::move(n));
  }
  std::vector<std::string> node_names;
  for (const auto& n : fed.nodes) node_names.push_back(n.name);

  // Authentication: every node's public key, from the directory the file names.
  auto auth = root.children("authentication");
  for (std::size_t k = 1; k < auth.size(); ++k)
    auth[k].error("a second <authentication> (a federation has one key directory)");
  if (!auth.empty()) {
    XmlElement& a = auth.front();
    const std::string dir = file.resolve(a.text("public_keys", "", true));
    a.finish();
    if (!dir.empty())
      for (auto& n : fed.nodes) {
        const std::string key = (std::filesystem::path(dir) / (n.name + ".pub")).string();
        try {
          n.public_key = transport::read_curve_key_file(key);
        } catch (const std::exception& e) {
          a.error(
              fmt::format("node '{}' has no public key: {} (make its key pair with "
                          "`fleetsim keygen {} --public-dir {}`)",
                          n.name, e.what(), n.name, dir));
        }
      }
  }

  // Resolves "node.port"; reports and returns nullopt when it names nothing.
  auto resolve = [&](XmlElement& fe, const std::string& ref,
                     bool output) -> std::optional<std::pair<std::size_t, std::size_t>> {
    const char* what = output ? "output" : "input";
    auto dot = ref.find('.');
    if (dot == std::string::npos) {
      fe.error(fmt::format("'{}' does not name a port (expected NODE.{})", ref, what));
      return std::nullopt;
    }
    std::string node = ref.substr(0, dot), port = ref.substr(dot + 1);
    auto it = node_index.find(node);
    if (it == node_index.end()) {
      fe.error(
          fmt::format("unknown node '{}' in '{}'{}", node, ref, did_you_mean(node, node_names)));
      return std::nullopt;
    }
    const auto& ports = output ? fed.nodes[it->second].outputs : fed.nodes[it->second].inputs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < ports.size(); ++i) {
      if (ports[i].name == port) return std::make_pair(it->second, i);
      names.push_back(ports[i].name);
    }
    fe.error(
        fmt::format("node '{}' has no {} '{}'{}", node, what, port, did_you_mean(port, names)));
    return std::nullopt;
  };

  // Flows.
  std::map<std::pair<std::size_t, std::size_t>, std::string> fed_inputs, used_outputs;
  std::set<std::string> flow_names;
  for (auto& fe : root.children("flow")) {
    FlowDecl f;
    f.where = fe.where();
    f.name = fe.text("name", "", true);
    if (fe.has("name") && !valid_name(f.name))
      fe.error(fmt::format("flow name '{}' is not valid (expected letters, digits, '_' or '-')",
                           f.name));
    if (!f.name.empty() && !flow_names.insert(f.name).second)
      fe.error(
          fmt::format("a flow called '{}' already exists (expected unique flow names)", f.name));
    std::string from = fe.text("from", "", true);
    std::string to = fe.text("to", "", true);
    bool ok = true;
    if (!from.empty()) {
      if (auto src = resolve(fe, from, true)) {
        f.source_node = src->first;
        f.source_output = src->second;
        auto [it, fresh] = used_outputs.emplace(*src, f.name);
        if (!fresh)
          fe.error(
              fmt::format("output '{}' is already the source of flow '{}' (expected one flow "
                          "per output)",
                          from, it->second));
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    auto sinks = split_list(to);
    if (fe.has("to") && sinks.empty())
      fe.error("attribute 'to' of <flow> is empty (expected one or more NODE.input)");
    for (const auto& s : sinks) {
      auto dst = resolve(fe, s, false);
      if (!dst) continue;
      if (ok && dst->first == f.source_node) {
        fe.error(
            fmt::format("node '{}' feeds itself through flow '{}' ('{}' to '{}'; expected the "
                        "sinks of a flow to be other nodes)",
                        fed.nodes[f.source_node].name, f.name, from, s));
        continue;
      }
      auto [it, fresh] = fed_inputs.emplace(*dst, f.name);
      if (!fresh) {
        fe.error(
            fmt::format("input '{}' is already fed by flow '{}' (expected each input to be "
                        "fed by exactly one output)",
                        s, it->second));
        continue;
      }
      f.sinks.push_back(*dst);
    }
    // The kind, then the periods (periodic and observation flows) or the lookahead (events).
    const std::string kind = fe.choice("kind", kFlowKinds, "periodic");
    f.kind = kind == "event"           ? transport::FlowKind::kEvent
             : kind == "observation"   ? transport::FlowKind::kObservation
             : kind == "receive-order" ? transport::FlowKind::kReceiveOrder
                                       : transport::FlowKind::kPeriodic;
    // A receive-order flow has no schedule: its messages go when the source sends them.
    if (f.kind != transport::FlowKind::kReceiveOrder) {
      parse_schedule(fe, kind, f);
    } else {
      for (const char* a : {"period", "lookahead", "initial"}) {
        if (fe.has(a))
          fe.error(
              fmt::format("attribute '{}' of receive-order flow '{}' means nothing (its "
                          "messages have no timestamps: they go when the source sends "
                          "them; expected no '{}', or another kind)",
                          a, f.name, a));
        fe.accept(a);
      }
      if (const auto not_programs = ok ? nodes_not_programs(fed, f) : std::vector<std::string>{};
          !not_programs.empty()) {
        fe.error(
            fmt::format("receive-order flow '{}' links node '{}', which is not a "
                        "program (expected federates at both ends: built-in and swarm "
                        "nodes take their inputs in time-stamp order only)",
                        f.name, fmt::join(not_programs, "', '")));
      }
    }
    fe.accept("dimensions");  // read with the modifiers, below
    fe.finish();
    // The class: the one its output names, else its inputs'; every port that names one must
    // name the same (the subscriber reads what the publisher writes).
    if (ok) {
      const NodeDecl& src = fed.nodes[f.source_node];
      const std::string& published = src.outputs[f.source_output].class_name;
      f.data_class = find_class(published);
      for (const auto& [sn, si] : f.sinks) {
        const std::string& subscribed = fed.nodes[sn].inputs[si].class_name;
        auto sub = find_class(subscribed);
        if (!sub) continue;
        if (!f.data_class) {
          f.data_class = sub;
          continue;
        }
        if (sub != f.data_class)
          fe.error(fmt::format(
              "flow '{}': node '{}' publishes class '{}' on output '{}' but node '{}' subscribes "
              "to class '{}' on input '{}' ({}; expected the same class on both sides)",
              f.name, src.name, f.data_class->name, src.outputs[f.source_output].name,
              fed.nodes[sn].name, sub->name, fed.nodes[sn].inputs[si].name,
              class_difference(*f.data_class, *sub)));
      }
    }
    parse_modifiers(fe, f, diags);
    parse_flow_dimensions(fe, fed, ok, f);
    f.source_known = ok;
    fed.flows.push_back(std::move(f));
  }

  // Every input fed, every output used.
  for (std::size_t n = 0; n < fed.nodes.size(); ++n) {
    for (std::size_t i = 0; i < fed.nodes[n].inputs.size(); ++i)
      if (!fed_inputs.count({n, i}))
        diags.error(fed.nodes[n].inputs[i].where,
                    fmt::format("input '{}.{}' is fed by no flow (expected each input to be fed "
                                "by exactly one output)",
                                fed.nodes[n].name, fed.nodes[n].inputs[i].name));
    for (std::size_t o = 0; o < fed.nodes[n].outputs.size(); ++o)
      if (!used_outputs.count({n, o}))
        diags.error(fed.nodes[n].outputs[o].where,
                    fmt::format("output '{}.{}' is the source of no flow (expected a <flow "
                                "from=\"{}.{}\" ...>)",
                                fed.nodes[n].name, fed.nodes[n].outputs[o].name, fed.nodes[n].name,
                                fed.nodes[n].outputs[o].name));
  }
  if (fed.nodes.empty()) root.error("the federation has no <node> (expected at least two)");

  // Endpoints: valid and distinct.
  std::map<std::string, std::string> endpoints;
  for (const auto& n : fed.nodes) {
    if (n.endpoint.empty()) continue;
    std::string problem = endpoint_problem(n.endpoint, std::max<std::size_t>(1, n.inputs.size()));
    if (!problem.empty())
      diags.error(n.where,
                  fmt::format("endpoint '{}' of node '{}': {}", n.endpoint, n.name, problem));
    auto [it, fresh] = endpoints.emplace(n.endpoint, n.name);
    if (!fresh)
      diags.error(n.where, fmt::format("endpoint '{}' is already used by node '{}' (expected one "
                                       "endpoint per node)",
                                       n.endpoint, it->second));
  }
  report_optional_nodes(fed, diags);
  report_zero_lookahead_circuits(fed, diags);
  if (diags.has_errors()) return std::nullopt;

  // The progress proof assumes a strongly connected flow graph: warn when it is not.
  std::size_t count = fed.nodes.size();
  std::vector<std::vector<std::size_t>> fwd(count), back(count);
  for (const auto& f : fed.flows)
    for (const auto& s : f.sinks) {
      if (f.kind == transport::FlowKind::kReceiveOrder) continue;  // carries no time
      if (fed.nodes[s.first].optional) continue;  // reads taps: never holds anyone back
      fwd[f.source_node].push_back(s.first);
      back[s.first].push_back(f.source_node);
    }
  auto reach = [&](const std::vector<std::vector<std::size_t>>& g) {
    std::vector<bool> seen(count, false);
    std::vector<std::size_t> stack{0};
    seen[0] = true;
    while (!stack.empty()) {
      std::size_t v = stack.back();
      stack.pop_back();
      for (std::size_t w : g[v])
        if (!seen[w]) {
          seen[w] = true;
          stack.push_back(w);
        }
    }
    return seen;
  };
  auto f1 = reach(fwd), f2 = reach(back);
  std::vector<std::string> outside;
  for (std::size_t i = 0; i < count; ++i)
    if (!fed.nodes[i].optional && (!f1[i] || !f2[i])) outside.push_back(fed.nodes[i].name);
  if (!outside.empty()) {
    std::string list;
    for (const auto& o : outside) list += (list.empty() ? "'" : ", '") + o + "'";
    diags.warning(root.where(),
                  fmt::format("the flow graph is not strongly connected: {} and '{}' do not reach "
                              "each other both ways; DSAAM's progress guarantee assumes a strongly "
                              "connected graph (a node outside it may wait forever or run ahead "
                              "until its buffers fill)",
                              list, fed.nodes[0].name));
  }
  return fed;
}

}  // namespace fleetsim::federation
