// A study file, read and checked as `gpuscale sweep FILE` does before it runs anything.
#include "tests/fuzz/fuzz_input.hpp"
#include "validation/studies/study_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = gpuscale::fuzz::write_input(data, size, "study.yaml");
  return gpuscale::fuzz::expect_answer([&] { gpuscale::sweep::load_study_file(path); });
}
