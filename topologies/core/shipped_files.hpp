// The folders of files gpuscale ships (machines, models, GPU specs), and how a name given by the
// user becomes a file: a shipped name ("dgx1-v100") or a path to a .yaml file.
#pragma once

#include <string>
#include <vector>

#include "topologies/core/error.hpp"

namespace gpuscale {

// Where the shipped files lie, laid out as in the source tree (topologies/, workloads/, ...):
//  1. $GPUSCALE_DATA_DIR, if set;
//  2. an installed tree's share/gpuscale/, beside the bin/ that holds the running executable
//     (`cmake --install`);
//  3. the source tree a build folder sits in, the executable's parent folder if it holds
//     topologies/gpus/ and workloads/frameworks/ (the README's build/; a copied tree reads its
//     own files);
//  4. the source tree this build was configured from.
std::string data_root();

// Whether `path` names a regular file. Never throws: a name too long for the file system, or a
// folder that cannot be searched, is simply no file (the caller says what to fix).
bool is_file(const std::string& path);

// A file named in a file, as `base:` names its base: a relative path is taken from `folder`, the
// folder of the file that names it; a shipped name ("dgx1-v100") stays as it is.
std::string file_or_name(const std::string& value, const std::string& folder);

// The folder of the file `origin` names a line of; empty (the working folder) for an origin that
// is no line of a file, such as a command-line option.
std::string folder_of(const Origin& origin);

// From now on this process reads, through ShippedFolder::resolve, only shipped names and paths
// inside data_root() (or a shipped folder set by its environment variable): `gpuscale serve`'s
// processes, so that no request makes the server read a file of its choosing (a `--set
// cluster.node=/etc/passwd`, a GPU model given as a path). Nothing turns it off.
void resolve_only_inside_the_data_tree();

class ShippedFolder {
 public:
  // `what` names one file in messages ("topology"); the folder is $`env_var` if set, else
  // `subdir` of data_root() ("topologies/gpus").
  ShippedFolder(std::string what, std::string env_var, std::string subdir);

  std::string dir() const;
  const std::string& what() const { return what_; }
  // Names of the shipped files (stems of the .yaml files), sorted.
  std::vector<std::string> names() const;

  // A shipped name or a path to a .yaml file. A relative path is taken relative to
  // `relative_to_dir` (empty: the working directory). `origin` is blamed if nothing matches; with
  // an empty origin (a name from the command line) a missing path blames the path itself. After
  // resolve_only_inside_the_data_tree(), a path outside the data tree is refused, unlooked at.
  std::string resolve(const std::string& name_or_path, const std::string& relative_to_dir,
                      const Origin& origin) const;

 private:
  std::string what_;
  std::string env_var_;
  std::string subdir_;
};

}  // namespace gpuscale
