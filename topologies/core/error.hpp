// The two kinds of failure gpuscale distinguishes (after gem5's fatal/panic):
//  - ConfigError: the user's input is wrong (bad YAML, unknown key, a GPU with no route). Its
//    message is one line, "WHERE: what is wrong (how to fix)", and main() exits with status 2.
//  - anything else thrown (std::logic_error & co.) is our bug.
// Library code throws; only main() chooses the exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuscale {

// Where a configuration value came from: "topologies/dgx1-v100.yaml:12", or "--set nodes=4" for a
// value given on the command line. An empty Origin means "no particular place".
struct Origin {
  std::string file;  // a path, or the command-line option that set the value
  int line = 0;      // 1-based; 0 when the origin is not a line of a file

  std::string str() const { return line > 0 ? file + ":" + std::to_string(line) : file; }
};

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const Origin& where, const std::string& what)
      : std::runtime_error(one_line(where.file.empty() ? what : where.str() + ": " + what)) {}

 private:
  // A value quoted in a message may hold a line break; the message stays one line.
  static std::string one_line(std::string text) {
    for (char& c : text) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return text;
  }
};

}  // namespace gpuscale
