// The folders of files gpuscale ships (machines, models, GPU specs), and how a name given by the
// user becomes a file: a shipped name ("dgx1-v100") or a path to a .yaml file.
#pragma once

#include <string>
#include <vector>

#include "sim/core/error.hpp"

namespace gpuscale {

class ShippedFolder {
 public:
  // `what` names one file in messages ("topology"); the folder is $`env_var` if set, else
  // `default_dir` (the source tree's folder this build came from).
  ShippedFolder(std::string what, std::string env_var, std::string default_dir);

  std::string dir() const;
  // Names of the shipped files (stems of the .yaml files), sorted.
  std::vector<std::string> names() const;

  // A shipped name or a path to a .yaml file. A relative path is taken relative to
  // `relative_to_dir` (empty: the working directory). `origin` is blamed if nothing matches; with
  // an empty origin (a name from the command line) a missing path blames the path itself.
  std::string resolve(const std::string& name_or_path, const std::string& relative_to_dir,
                      const Origin& origin) const;

 private:
  std::string what_;
  std::string env_var_;
  std::string default_dir_;
};

}  // namespace gpuscale
