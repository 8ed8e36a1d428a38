// A model file, loaded as `gpuscale workload show FILE` does: layers, shapes and templates.
#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/src/workload_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gpuscale::fuzz::write_input(data, size, "model.yaml");
  return gpuscale::fuzz::expect_answer([&] { gpuscale::wl::load_workload(path); });
}
