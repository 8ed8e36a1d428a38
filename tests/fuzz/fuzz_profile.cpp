// A measured kernel profile (calibration/data), read as `--profile FILE` reads it.
#include "sim/compute/profile.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gpuscale::fuzz::write_input(data, size, "profile.yaml");
  return gpuscale::fuzz::expect_answer([&] { gpuscale::compute::load_profile(path); });
}
