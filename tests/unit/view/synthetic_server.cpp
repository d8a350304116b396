// Serves a SyntheticLogReader through ViewServer, for working on the page without a log.
#include <cstdlib>
#include <iostream>

#include "synthetic_log.hpp"
#include "view/view_server.hpp"

int main(int argc, char** argv) {
  using namespace fleetsim::view;
  std::size_t robots = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 200;
  std::size_t frames = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 500;
  int port = argc > 3 ? std::atoi(argv[3]) : 0;
  ViewConfig config = default_view_config();
  if (argc > 4) {
    fleetsim::Diagnostics d;
    auto c = load_view_config(argv[4], d);
    d.print(std::cerr);
    if (!c) return 2;
    config = *c;
  }
  ViewServer server(std::make_unique<testing::SyntheticLogReader>(robots, frames),
                    std::move(config), "synthetic",
                    [](const std::string& m) { std::cerr << "error: " << m << std::endl; });
  int p = server.bind("127.0.0.1", port);
  std::cout << "http://127.0.0.1:" << p << "/" << std::endl;
  server.run();
}
