// One writer at a time in a sweep's output folder: a second `gpuscale sweep` (or `sweep merge`)
// into the --out of one still running is refused, where the two would otherwise interleave
// their results files. The lock is an flock(2) on OUT/.lock, which the kernel releases when its
// holder exits, however it exits: a killed sweep leaves no stale lock. The file holds the
// holder's pid, for the refusal's message.
#pragma once

#include <string>

namespace gpuscale::sweep {

class OutputFolderLock {
 public:
  // Creates `dir` if missing and takes its lock until destruction. Throws ConfigError when
  // another process holds it, or when the folder or its lock file cannot be made.
  explicit OutputFolderLock(const std::string& dir);
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace gpuscale::sweep
