// An experiment file, read as `gpuscale run FILE` reads it before simulating anything.
#include "sim/experiment/experiment_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gpuscale::fuzz::write_input(data, size, "experiment.yaml");
  return gpuscale::fuzz::expect_answer([&] { gpuscale::sim::load_experiment_file(path); });
}
