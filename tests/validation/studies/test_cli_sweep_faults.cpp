// `gpuscale sweep` when something goes wrong around it: killed half-way and run again, two at
// once into one folder, a read-only folder, a full disk, a folder where a file goes. Each either
// ends with the bytes of an undisturbed sweep or stops with one line (exit 2), and leaves no
// temporary file and no part of a file behind.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/support/test_support.hpp"
#include "tests/validation/studies/sweep_folders.hpp"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::kGpuscale;
using testing::out_dir;
using testing::read_file;
using testing::run_command;

const char* const kOutputs[] = {"results.csv", "results.json", "study.yaml"};

// 48 runs of ResNet-152, 50 to 90 ms each on a 2-core VM: a sweep of seconds, long enough to be
// caught between its first cached result and its last with a simulation that has run for a
// clock tick. (AlexNet's runs, a third as long, let a whole sweep on an idle machine slip
// between the stops of stop_during_a_simulation.)
const char* kLongStudy =
    "name: faults\n"
    "base: {workload: resnet-152, images: 25600, without: input}\n"
    "axes:\n"
    "  machine: [dgx1-v100, c4140-k]\n"
    "  comm: [p2p, nccl_reduce_bcast]\n"
    "  batch: [16, 32, 64, 128]\n"
    "  gpus: [1, 2, 4]\n";
constexpr size_t kLongStudyRuns = 48;

const char* kShortStudy =
    "name: short\n"
    "base: {workload: lenet, batch: 16, images: 25600, without: input}\n"
    "axes:\n"
    "  comm: [p2p, nccl_reduce_bcast]\n"
    "  gpus: [1, 2]\n";

// A gpuscale sweep started in a process group of its own (its simulations are forked into it),
// stdout discarded, stderr on a pipe: a test can stop it, kill it or limit the files it writes.
// Whatever a test leaves running is killed, group and all, when it ends.
class SweepProcess {
 public:
  explicit SweepProcess(const std::vector<std::string>& args,
                        rlim_t file_size_limit = RLIM_INFINITY) {
    std::vector<std::string> words = {kGpuscale, "sweep"};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      if (file_size_limit != RLIM_INFINITY) {
        // A disk that fills: a write past the limit fails with EFBIG (SIGXFSZ ignored), as one
        // past the free space fails with ENOSPC. A pipe has no size: stderr is unlimited.
        const rlimit limit{file_size_limit, file_size_limit};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        ::signal(SIGXFSZ, SIG_IGN);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // the group exists before the child's own setpgid runs
    ::close(fds[1]);
    err_fd_ = fds[0];
  }
  ~SweepProcess() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      // The sweep, and its simulations where they became this process's children (a subreaper).
      while (::waitpid(-pid_, nullptr, 0) > 0 || errno == EINTR) {
      }
    }
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  SweepProcess(const SweepProcess&) = delete;
  SweepProcess& operator=(const SweepProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Its wait status, once it has ended.
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return status;
  }
  bool ended() {
    int status = 0;
    if (!reaped_ && ::waitpid(pid_, &status, WNOHANG) == pid_) reaped_ = true;
    return reaped_;
  }
  // Everything it (and its simulations) wrote on stderr, once all have ended.
  std::string stderr_text() {
    std::string text;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(err_fd_, buffer, sizeof buffer)) > 0) text.append(buffer, n);
    return text;
  }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
};

// The command's error: its stderr without the progress lines ("[3/8] simulated ...").
std::string error_of(std::string err) {
  while (err.starts_with("[")) err.erase(0, err.find('\n') + 1);
  return err;
}

size_t line_count(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// Every file under `dir` whose name says it is a temporary one.
std::vector<std::string> temporary_files(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().find(".partial") != std::string::npos) {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

std::vector<fs::path> cache_files(const std::string& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(dir) / "runs", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".json") found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The number of cache files in `dir`, each checked to hold a whole result under its own hash.
size_t expect_whole_cache(const std::string& dir) {
  const std::vector<fs::path> files = cache_files(dir);
  for (const fs::path& file : files) {
    const auto j = nlohmann::json::parse(read_file(file), nullptr, false);
    EXPECT_TRUE(j.is_object()) << file << " is not a whole JSON object";
    if (!j.is_object()) continue;
    EXPECT_EQ(j.value("hash", ""), file.stem().string()) << file;
    EXPECT_TRUE(j.contains("result") && j["result"].is_object()) << file;
  }
  return files.size();
}

// Waits until `sweep` has cached a result; false if it ended first.
bool wait_for_a_cached_result(SweepProcess& sweep, const std::string& dir) {
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (cache_files(dir).empty()) {
    if (sweep.ended() || std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return !sweep.ended();
}

// What /proc/PID/stat says of a process: "pid (name) state ppid pgrp session tty tpgid flags
// minflt cminflt majflt cmajflt utime stime ...".
struct ProcessState {
  pid_t pid = 0;
  char state = 0;  // 'Z': a zombie, ended
  pid_t group = 0;
  unsigned long cpu_ticks = 0;  // user and system time, in clock ticks
};

std::vector<ProcessState> processes_in_group(pid_t group) {
  std::vector<ProcessState> found;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(it->path() / "stat");
    const size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) continue;
    ProcessState p{std::stoi(name)};
    unsigned long user = 0, system = 0;
    const char* format = " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu";
    if (std::sscanf(stat.c_str() + name_end + 1, format, &p.state, &p.group, &user, &system) == 4 &&
        p.group == group) {
      p.cpu_ticks = user + system;
      found.push_back(p);
    }
  }
  return found;
}

// The processes of group `group` that have not ended: a sweep and the simulations it forked.
std::vector<pid_t> live_processes_in_group(pid_t group) {
  std::vector<pid_t> live;
  for (const ProcessState& p : processes_in_group(group)) {
    if (p.state != 'Z') live.push_back(p.pid);
  }
  return live;
}

std::vector<pid_t> wait_for_group_to_die(pid_t group) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!live_processes_in_group(group).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return live_processes_in_group(group);
}

// Stops the group of the sweep `sweep` while a simulation is under way: one that has run for a
// clock tick, not one just forked, stopped before it asked for its parent's death signal.
// Returns the simulations' pids.
std::vector<pid_t> stop_during_a_simulation(pid_t sweep) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    ::kill(-sweep, SIGSTOP);
    std::this_thread::sleep_for(5ms);  // the stop reaches every member
    std::vector<pid_t> simulations;
    bool under_way = true;
    for (const ProcessState& p : processes_in_group(sweep)) {
      if (p.pid == sweep || p.state == 'Z') continue;
      simulations.push_back(p.pid);
      under_way = under_way && p.cpu_ticks > 0;
    }
    if (!simulations.empty() && under_way) return simulations;
    ::kill(-sweep, SIGCONT);
    std::this_thread::sleep_for(3ms);
  }
  return {};
}

void expect_outputs_equal(const std::string& dir, const std::string& expected_dir) {
  for (const char* file : kOutputs) {
    EXPECT_EQ(read_file(fs::path(dir) / file), read_file(fs::path(expected_dir) / file)) << file;
  }
}

std::string sweep_command(const std::string& study, const std::string& out) {
  return kGpuscale + " sweep " + study + " --out " + out + " --jobs 2";
}

TEST(CliSweepFaults, AKilledSweepRunAgainEndsWithTheBytesOfAnUninterruptedOne) {
  const std::string study = testing::write_temp_file("killed.yaml", kLongStudy);
  const std::string uninterrupted = out_dir("uninterrupted");
  const auto whole = run_command(sweep_command(study, uninterrupted));
  ASSERT_EQ(whole.status, 0) << whole.err;

  const std::string out = out_dir("killed");
  // Orphans become this process's children, not init's: their group stays in this session,
  // where the kernel does not wake a stopped one (SIGHUP, SIGCONT) when its parent dies.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  {
    SweepProcess killed({study, "--out", out, "--jobs", "1"});
    ASSERT_TRUE(wait_for_a_cached_result(killed, out)) << "the sweep ended before it was killed";
    // Stopped, its simulation with it, then killed alone: only PR_SET_PDEATHSIG ends that
    // simulation, which would otherwise wait, stopped, forever.
    const std::vector<pid_t> simulations = stop_during_a_simulation(killed.pid());
    EXPECT_FALSE(simulations.empty()) << "no simulation was running when the sweep was stopped";
    ::kill(killed.pid(), SIGKILL);
    const int status = killed.wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_EQ(wait_for_group_to_die(killed.pid()), std::vector<pid_t>{})
        << "simulations outlived their sweep";
  }
  const size_t cached = expect_whole_cache(out);
  ASSERT_GE(cached, 1u);
  ASSERT_LT(cached, kLongStudyRuns);

  const auto resumed = run_command(sweep_command(study, out));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find(fmt::format("({} simulated, {} cached)", kLongStudyRuns - cached,
                                         cached)),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
  EXPECT_EQ(expect_whole_cache(out), kLongStudyRuns);
  expect_outputs_equal(out, uninterrupted);
}

// What a killed sweep (or an older gpuscale, or a crash of the machine) may leave: a cache file
// cut short, and temporary files, of its own PATH.partial.PID form or the older PATH.partial.
TEST(CliSweepFaults, ACacheFileCutShortIsSimulatedAgainAndDeadWritersFilesAreRemoved) {
  const std::string study = testing::write_temp_file("damaged.yaml", kShortStudy);
  const std::string out = out_dir("damaged");
  ASSERT_EQ(run_command(sweep_command(study, out)).status, 0);
  const std::string expected = out_dir("damaged-expected");
  fs::create_directories(expected);
  for (const char* file : kOutputs) fs::copy_file(fs::path(out) / file, fs::path(expected) / file);

  const fs::path cut = cache_files(out).front();
  const std::string text = read_file(cut);
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2);
  // 99999999 is above any pid_max (2^22): no process has it.
  const fs::path dead = fs::path(out) / "results.csv.partial.99999999";
  const fs::path old_form = cut.string() + ".partial";
  const fs::path live = fs::path(out) / fmt::format("results.json.partial.{}", ::getpid());
  for (const fs::path& p : {dead, old_form, live}) std::ofstream(p) << "half a file";

  const auto r = run_command(sweep_command(study, out));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(fmt::format("gpuscale: warning: {} holds no whole result of run ",
                                   cut.string())),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("(1 simulated, 3 cached)"), std::string::npos) << r.out;
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{live.string()})
      << "a live process's temporary file is its own; the others are no one's";
  EXPECT_EQ(expect_whole_cache(out), 4u);
  expect_outputs_equal(out, expected);
}

TEST(CliSweepFaults, ASecondSweepIntoTheFolderOfARunningOneIsRefused) {
  const std::string study = testing::write_temp_file("concurrent.yaml", kLongStudy);
  const std::string uninterrupted = out_dir("concurrent-alone");
  ASSERT_EQ(run_command(sweep_command(study, uninterrupted)).status, 0);

  const std::string out = out_dir("concurrent");
  SweepProcess first({study, "--out", out, "--jobs", "1"});
  ASSERT_TRUE(wait_for_a_cached_result(first, out)) << "the first sweep ended too soon";
  ::kill(first.pid(), SIGSTOP);  // held half-way, its lock with it
  const auto second = run_command(sweep_command(study, out));
  const auto merge = run_command(kGpuscale + " sweep merge " + uninterrupted + " --out " + out);
  ::kill(first.pid(), SIGCONT);
  const int status = first.wait();

  const std::string refusal =
      fmt::format("--out {}: another gpuscale sweep (pid {}) is writing into this folder; wait "
                  "for it or choose another --out\n", out, first.pid());
  EXPECT_EQ(second.status, 2);
  EXPECT_EQ(second.err, refusal);
  EXPECT_EQ(second.out, "");
  EXPECT_EQ(merge.status, 2);
  EXPECT_EQ(merge.err, refusal);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << first.stderr_text();
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
  EXPECT_EQ(expect_whole_cache(out), kLongStudyRuns);
  expect_outputs_equal(out, uninterrupted);

  // The lock goes with its holder: the folder is free again.
  const auto after = run_command(sweep_command(study, out));
  EXPECT_EQ(after.status, 0) << after.err;
}

// Restores a folder's permissions when a test ends, so that it can be removed.
struct WritableAgain {
  fs::path dir;
  ~WritableAgain() { fs::permissions(dir, fs::perms::owner_all); }
};

TEST(CliSweepFaults, AReadOnlyFolderIsOneLineNamingTheFile) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root writes into read-only folders: run this test as another user";
  }
  const std::string study = testing::write_temp_file("read-only.yaml", kShortStudy);
  const fs::path read_only = out_dir("read-only");
  const fs::path cache_read_only = out_dir("cache-read-only");
  fs::create_directories(read_only);
  fs::create_directories(cache_read_only / "runs");
  const WritableAgain restore_first{read_only}, restore_second{cache_read_only / "runs"};
  fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
  fs::permissions(cache_read_only / "runs", fs::perms::owner_read | fs::perms::owner_exec);
  struct Case {
    fs::path out;
    std::string says;
  };
  const Case cases[] = {
      {read_only / "new", fmt::format("cannot create folder '{}'", (read_only / "new").string())},
      {read_only, fmt::format("--out {}: cannot create '{}' (Permission denied): make the folder "
                              "writable", read_only.string(), (read_only / ".lock").string())},
      {cache_read_only, fmt::format("cannot write '{}/runs/", cache_read_only.string())},
  };
  for (const Case& c : cases) {
    const auto r = run_command(sweep_command(study, c.out.string()));
    EXPECT_EQ(r.status, 2) << c.out;
    const std::string error = error_of(r.err);
    EXPECT_EQ(line_count(error), 1u) << r.err;
    EXPECT_NE(error.find(c.says), std::string::npos) << r.err;
    EXPECT_NE(error.find("Permission denied"), std::string::npos) << r.err;
    EXPECT_EQ(temporary_files(cache_read_only.string()), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(c.out / "results.json"));
  }
}

// A disk that fills before the first result is cached, and one that fills after the cache, as
// the results are written: either way one line naming the file, and no part of it on disk.
TEST(CliSweepFaults, AFullDiskIsOneLineNamingTheFileAndLeavesNoPartOfIt) {
  const std::string study = testing::write_temp_file("full.yaml", kShortStudy);
  const std::string roomy = out_dir("full-disk-expected");
  ASSERT_EQ(run_command(sweep_command(study, roomy)).status, 0);
  // Room for every cache file and study.yaml (written first), not for results.json.
  uintmax_t room = fs::file_size(fs::path(roomy) / "study.yaml");
  for (const fs::path& file : cache_files(roomy)) room = std::max(room, fs::file_size(file));
  ASSERT_LT(room, fs::file_size(fs::path(roomy) / "results.json"));

  struct Case {
    rlim_t limit;
    size_t cached;        // whole results left in the cache
    std::string failing;  // the file the error names
  };
  const Case cases[] = {{64, 0, "runs/"}, {room, 4, "results.json"}};
  for (const Case& c : cases) {
    const std::string out = out_dir("full-disk");
    SweepProcess sweep({study, "--out", out, "--jobs", "2"}, c.limit);
    const std::string err = sweep.stderr_text();
    const int status = sweep.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << err;
    const std::string error = error_of(err);
    EXPECT_EQ(line_count(error), 1u) << err;
    EXPECT_NE(error.find(fmt::format("cannot write '{}/{}", out, c.failing)), std::string::npos)
        << err;
    EXPECT_NE(error.find("(File too large): free some space"), std::string::npos) << err;
    EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
    EXPECT_EQ(expect_whole_cache(out), c.cached);
    EXPECT_FALSE(fs::exists(fs::path(out) / "results.json"));
    EXPECT_FALSE(fs::exists(fs::path(out) / "results.csv"));
  }
}

// rename(2) onto a folder fails: a user's error to report, not an internal one.
TEST(CliSweepFaults, AFolderWhereAnOutputGoesIsOneLineNotAnInternalError) {
  const std::string study = testing::write_temp_file("in-the-way.yaml", kShortStudy);
  const std::string out = out_dir("in-the-way");
  fs::create_directories(fs::path(out) / "results.csv" / "a-file-of-the-user");
  const auto r = run_command(sweep_command(study, out));
  EXPECT_EQ(r.status, 2) << r.err;
  const std::string error = error_of(r.err);
  EXPECT_EQ(line_count(error), 1u) << r.err;
  EXPECT_NE(error.find(fmt::format("--out: cannot write '{}/results.csv' (Is a directory): a "
                                   "folder has its name", out)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(temporary_files(out), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuscale
