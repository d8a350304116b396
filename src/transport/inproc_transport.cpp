#include "transport/inproc_transport.hpp"

#include <stdexcept>

namespace fleetsim::transport {

/// A node's view of an InprocNetwork.
class InprocPort final : public Port {
 public:
  InprocPort(InprocNetwork& net, const NodeLayout& layout, PortOptions options)
      : Port(layout, std::move(options)), net_(net) {
    for (const auto& in : layout_.inputs) inputs_.push_back(&net_.queue(layout_.name, in.flow));
    for (const auto& out : layout_.outputs) {
      std::vector<InprocNetwork::Queue*> sinks;
      for (const auto& s : out.sinks) sinks.push_back(&net_.queue(s, out.flow));
      outputs_.push_back(std::move(sinks));
    }
  }

  void send(std::size_t output, const Message& m) override {
    for (std::size_t i = 0; i < outputs_.at(output).size(); ++i) deliver(output, i, m);
  }

  void send_each(std::size_t output, std::span<const Message> per_sink) override {
    if (per_sink.size() != outputs_.at(output).size())
      throw std::logic_error("send_each: one message per sink");
    for (std::size_t i = 0; i < per_sink.size(); ++i) deliver(output, i, per_sink[i]);
  }

  Message receive(std::size_t input) override {
    auto& q = *inputs_.at(input);
    std::unique_lock lock(q.mutex);
    auto since = std::chrono::steady_clock::now();
    while (q.items.empty() && !net_.stopped()) {
      if (q.changed.wait_for(lock, options_.wait_report_after) == std::cv_status::timeout &&
          q.items.empty()) {
        // Report without the lock: the report may stop the network, which takes every lock.
        lock.unlock();
        report_wait(false, input, layout_.inputs[input].source, since);
        lock.lock();
      }
    }
    // A stopped federation refuses everything, even messages already delivered.
    if (net_.stopped()) net_.throw_stopped();
    Message m = std::move(q.items.front());
    q.items.pop_front();
    stats_.messages_received++;
    last_from_[layout_.inputs[input].source] = m.timestamp;
    lock.unlock();
    q.changed.notify_all();
    return m;
  }

  void close() override {}

 private:
  /// Delivers `m` to sink `i` of `output`, waiting while its buffer is full.
  void deliver(std::size_t output, std::size_t i, const Message& m) {
    jitter();
    auto& q = *outputs_.at(output)[i];
    std::unique_lock lock(q.mutex);
    auto since = std::chrono::steady_clock::now();
    while (q.items.size() >= q.capacity && !net_.stopped()) {
      if (q.changed.wait_for(lock, options_.wait_report_after) == std::cv_status::timeout &&
          q.items.size() >= q.capacity) {
        // Report without the lock: the report may stop the network, which takes every lock.
        lock.unlock();
        report_wait(true, output, layout_.outputs[output].sinks[i], since);
        lock.lock();
      }
    }
    if (net_.stopped()) net_.throw_stopped();
    q.items.push_back(m);
    stats_.messages_sent++;
    stats_.bytes_sent += m.payload.size();
    lock.unlock();
    q.changed.notify_all();
  }

  InprocNetwork& net_;
  std::vector<InprocNetwork::Queue*> inputs_;
  std::vector<std::vector<InprocNetwork::Queue*>> outputs_;
};

InprocNetwork::InprocNetwork(const FederationLayout& layout) : layout_(layout) {
  for (const auto& n : layout_.nodes)
    for (const auto& in : n.inputs) {
      auto q = std::make_unique<Queue>();
      q->capacity = in.capacity == 0 ? 1 : in.capacity;
      queues_[{n.name, in.flow}] = std::move(q);
    }
}

InprocNetwork::Queue& InprocNetwork::queue(const std::string& node, FlowId flow) {
  auto it = queues_.find({node, flow});
  if (it == queues_.end())
    throw std::logic_error("in-process transport: node '" + node + "' has no input for flow " +
                           std::to_string(flow));
  return *it->second;
}

std::unique_ptr<Port> InprocNetwork::port(const std::string& name, PortOptions options) {
  const NodeLayout* n = layout_.find(name);
  if (!n) throw std::logic_error("in-process transport: unknown node '" + name + "'");
  return std::make_unique<InprocPort>(*this, *n, std::move(options));
}

void InprocNetwork::stop(const std::string& reason) {
  {
    std::lock_guard g(reason_mutex_);
    if (reason_.empty()) reason_ = reason;
  }
  stopped_.store(true);
  // Take every queue's lock so that no waiter misses the flag between its check and its wait.
  for (auto& [key, q] : queues_) {
    { std::lock_guard g(q->mutex); }
    q->changed.notify_all();
  }
}

void InprocNetwork::throw_stopped() const {
  std::lock_guard g(reason_mutex_);
  throw FederationStopped(reason_);
}

}  // namespace fleetsim::transport
