// An installed gpuscale (`cmake --install`) reads the shipped files installed beside it, and a
// copied tree's build/gpuscale reads that tree's files, not those of the tree it was built from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

TEST(CliInstall, AnInstalledGpuscaleReadsTheFilesInstalledBesideIt) {
  const fs::path prefix = fs::path(GPUSCALE_TEST_TMPDIR) / "install-prefix";
  fs::remove_all(prefix);
  const auto install = run_command("cmake --install " + std::string(GPUSCALE_BINARY_DIR) +
                                   " --prefix " + prefix.string());
  ASSERT_EQ(install.status, 0) << install.out << install.err;
  const fs::path share = prefix / "share" / "gpuscale";
  for (const char* file : {"topologies/dgx1-v100.yaml", "topologies/gpus/v100-sxm2.yaml",
                           "workloads/lenet.yaml", "workloads/frameworks/mxnet.yaml",
                           "workloads/datasets/imagenet.yaml", "validation/dgx1-mxnet/suite.yaml",
                           "sim/compute/analytic-v100.yaml", "tools/experiments/dgx1-study.yaml",
                           "tools/serve/web/index.html", "tools/serve/web/app.js",
                           "tools/serve/web/style.css", "docs/serve.md",
                           "docs/figures/serve-default.png"}) {
    EXPECT_TRUE(fs::is_regular_file(share / file)) << file;
  }
  // From another working directory, with no source tree in sight of the executable.
  const std::string gpuscale = (prefix / "bin" / "gpuscale").string();
  const auto show = run_command("cd / && " + gpuscale + " workload show lenet");
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_THAT(show.out, ::testing::HasSubstr("file: " + (share / "workloads" / "lenet.yaml").string()));
  const auto run = run_command("cd / && " + gpuscale + " run --workload lenet --gpus 2 --batch 16 "
                               "--comm nccl --format json");
  EXPECT_EQ(run.status, 0) << run.err;
  const auto study = run_command("cd / && " + gpuscale + " validate --suite mxnet-v100 > /dev/null");
  EXPECT_EQ(study.status, 0) << study.err;

  // A tree laid out as the source tree, its build/ holding the executable: it reads its own files.
  const fs::path tree = fs::path(GPUSCALE_TEST_TMPDIR) / "copied-tree";
  fs::remove_all(tree);
  fs::copy(share, tree, fs::copy_options::recursive);
  fs::create_directory(tree / "build");
  fs::copy_file(prefix / "bin" / "gpuscale", tree / "build" / "gpuscale");
  const auto copied = run_command("cd / && " + (tree / "build" / "gpuscale").string() +
                                  " workload show lenet");
  ASSERT_EQ(copied.status, 0) << copied.err;
  EXPECT_THAT(copied.out, ::testing::HasSubstr("file: " + (tree / "workloads" / "lenet.yaml").string()));
  fs::remove_all(tree);
  fs::remove_all(prefix);
}

}  // namespace
}  // namespace gpuscale
