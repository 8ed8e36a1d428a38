// docs/tutorial.md runs as written: every `build/gpuscale` command of its ```sh blocks exits with
// status 0, run on the executable under test in a fresh folder holding the files the tutorial asks
// the student to save (a ```yaml block after a line "Save this as `NAME`:") and a link to docs/,
// as in the repository root. A command piped into another tool (`| dot`) runs up to the pipe:
// that tool may be absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/test_support.hpp"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;

const std::string kTutorial = std::string(GPUSCALE_SOURCE_DIR) + "/docs/tutorial.md";
const std::string kPrefix = "build/gpuscale";

struct Tutorial {
  std::vector<std::string> commands;           // as written, continuation lines joined
  std::map<std::string, std::string> files;    // name -> text the student saves
};

// Where the shell part that gpuscale runs ends: at the first pipe or comment outside quotes.
std::string before_pipe_or_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '|' || (c == '#' && i > 0 && line[i - 1] == ' ')) {
      return line.substr(0, line.find_last_not_of(' ', i - 1) + 1);
    }
  }
  return line;
}

Tutorial read_tutorial() {
  std::ifstream in(kTutorial);
  Tutorial tutorial;
  const std::regex save_as("Save this as `([^`]+)`:");
  std::string line, fence, pending, last_prose, file_name, file_text;
  while (std::getline(in, line)) {
    if (fence.empty()) {
      if (line.starts_with("```")) {
        fence = line.substr(3);
        std::smatch m;
        file_name = fence == "yaml" && std::regex_search(last_prose, m, save_as) ? m[1].str() : "";
        file_text.clear();
      } else if (!line.empty()) {
        last_prose = line;
      }
      continue;
    }
    if (line.starts_with("```")) {
      if (!file_name.empty()) tutorial.files[file_name] = file_text;
      fence.clear();
      last_prose.clear();
      continue;
    }
    if (fence == "yaml") file_text += line + "\n";
    if (fence != "sh") continue;
    if (line.ends_with("\\")) {
      pending += line.substr(0, line.size() - 1);
      continue;
    }
    const std::string command = pending + line;
    pending.clear();
    if (command.starts_with(kPrefix + " ")) tutorial.commands.push_back(command);
  }
  return tutorial;
}

const Tutorial& tutorial() {
  static const Tutorial t = read_tutorial();
  return t;
}

TEST(Tutorial, HasTheCommandsAndFilesAStudentUses) {
  ASSERT_TRUE(fs::exists(kTutorial)) << kTutorial;
  EXPECT_GE(tutorial().commands.size(), 8u);  // fewer means the extractor broke
  EXPECT_TRUE(tutorial().files.contains("my-dgx1.yaml"));
}

class TutorialCommand : public ::testing::TestWithParam<size_t> {};

TEST_P(TutorialCommand, ExitsWithStatusZero) {
  const std::string& written = tutorial().commands.at(GetParam());
  SCOPED_TRACE(written);
  // A fresh folder for each command: none depends on what another left behind.
  const fs::path folder = fs::path(GPUSCALE_TEST_TMPDIR) /
                          ("tutorial-" + std::to_string(::getpid()) + "-" +
                           std::to_string(GetParam()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  for (const auto& [name, text] : tutorial().files) std::ofstream(folder / name) << text;
  // Commands name the shipped studies as from the repository root (docs/studies/...).
  fs::create_directory_symlink(fs::path(GPUSCALE_SOURCE_DIR) / "docs", folder / "docs");
  const std::string command = GPUSCALE_EXECUTABLE + before_pipe_or_comment(written).substr(
                                                        kPrefix.size());
  const auto r = testing::run_command("cd '" + folder.string() + "' && " + command);
  EXPECT_EQ(r.status, 0) << r.err;
  fs::remove_all(folder);
}

std::vector<size_t> command_indices() {
  std::vector<size_t> indices(tutorial().commands.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  return indices;
}

INSTANTIATE_TEST_SUITE_P(Docs, TutorialCommand, ::testing::ValuesIn(command_indices()));

}  // namespace
}  // namespace gpuscale
