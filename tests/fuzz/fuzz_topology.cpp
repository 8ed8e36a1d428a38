// A machine file, loaded and built as `gpuscale topo show FILE` does: graph, routes and rings.
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/src/topology.hpp"
#include "topologies/src/topology_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gpuscale::fuzz::write_input(data, size, "machine.yaml");
  return gpuscale::fuzz::expect_answer([&] {
    gpuscale::topo::Topology::build(gpuscale::topo::load_topology_config(path));
  });
}
