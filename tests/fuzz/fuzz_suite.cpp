// A validation suite's suite.yaml, read with the DGX-1 suite's tables and claims beside it, as
// `gpuscale validate --suite DIR` reads it before predicting anything.
#include <filesystem>

#include "tests/fuzz/fuzz_input.hpp"
#include "validation/src/suite.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  namespace fs = std::filesystem;
  fs::copy(fs::path(GPUSCALE_SOURCE_DIR) / "validation" / "dgx1-mxnet",
           gpuscale::fuzz::scratch_folder(), fs::copy_options::overwrite_existing);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpuscale::fuzz::write_input(data, size, "suite.yaml");
  return gpuscale::fuzz::expect_answer([] {
    gpuscale::validation::load_suite(gpuscale::fuzz::scratch_folder().string());
  });
}
