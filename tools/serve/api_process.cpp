#include "tools/serve/api_process.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "topologies/core/error.hpp"
#include "topologies/core/shipped_files.hpp"

namespace gpuscale::serve {
namespace {

constexpr char kMachine = 'M';
constexpr char kRun = 'R';
constexpr char kTrain = 'T';

nlohmann::ordered_json answer_of(char question, const std::string& payload, const Limits& limits) {
  switch (question) {
    case kMachine: return machine(payload);
    case kRun: return run(payload, limits);
    default: return train(payload, limits);
  }
}

bool write_bytes(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_bytes(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A message: a tag (the question, or the answer's status), the text's length, the text.
template <class Tag>
bool send(int fd, Tag tag, const std::string& text) {
  const std::uint64_t size = text.size();
  return write_bytes(fd, &tag, sizeof tag) && write_bytes(fd, &size, sizeof size) &&
         write_bytes(fd, text.data(), text.size());
}

template <class Tag>
bool receive(int fd, Tag& tag, std::string& text) {
  std::uint64_t size = 0;
  if (!read_bytes(fd, &tag, sizeof tag) || !read_bytes(fd, &size, sizeof size)) return false;
  text.resize(size);
  return read_bytes(fd, text.data(), size);
}

ApiAnswer error_answer(int status, const std::string& message) {
  return {status, nlohmann::ordered_json{{"error", message}}.dump()};
}

ApiAnswer answer(char question, const std::string& payload, const Limits& limits) {
  try {
    return {200, answer_of(question, payload, limits).dump()};
  } catch (const ConfigError& e) {
    return error_answer(400, e.what());
  } catch (const RunTooLong& e) {
    return error_answer(503, e.what());
  } catch (const std::exception& e) {
    return error_answer(500, fmt::format("internal error (please report it with the request): {}",
                                         e.what()));
  }
}

[[noreturn]] void answer_questions(int in, int out, const Limits& limits) {
  char question = 0;
  std::string payload;
  while (receive(in, question, payload)) {
    const ApiAnswer a = answer(question, payload, limits);
    if (!send(out, a.status, a.json)) break;
  }
  ::_exit(0);
}

}  // namespace

ApiProcess::ApiProcess(const Limits& limits, const std::vector<int>& others) {
  // Close-on-exec: a program the server's process runs (a test's browser) holds none of them.
  int questions[2] = {-1, -1}, answers[2] = {-1, -1};
  if (::pipe2(questions, O_CLOEXEC) != 0 || ::pipe2(answers, O_CLOEXEC) != 0) {
    for (const int fd : {questions[0], questions[1]})
      if (fd >= 0) ::close(fd);
    throw std::runtime_error("serve: pipe failed");
  }
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    for (const int fd : {questions[0], questions[1], answers[0], answers[1]}) ::close(fd);
    throw std::runtime_error("serve: fork failed");
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it serves nobody once the server is gone
    if (::getppid() != parent) ::_exit(1);
    resolve_only_inside_the_data_tree();  // a request names shipped files, never others
    // The other processes' pipes: held here, their questions would never end.
    for (const int fd : others) ::close(fd);
    ::close(questions[1]);
    ::close(answers[0]);
    answer_questions(questions[0], answers[1], limits);
  }
  ::close(questions[0]);
  ::close(answers[1]);
  to_ = questions[1];
  from_ = answers[0];
}

ApiProcess::~ApiProcess() {
  ::close(to_);  // its read ends: it exits
  ::close(from_);
  ::waitpid(pid_, nullptr, 0);
}

std::vector<int> ApiProcess::pipe_ends() const { return {to_, from_}; }

ApiAnswer ApiProcess::ask(char question, const std::string& payload) {
  ApiAnswer a;
  if (!send(to_, question, payload) || !receive(from_, a.status, a.json))
    throw std::runtime_error("serve: the process that answers the API is gone");
  return a;
}

ApiPool::ApiPool(const Limits& limits) : wait_s_(limits.max_run_seconds) {
  // A question written to a process that has died must fail (EPIPE, and that process is dropped),
  // not end the server with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<int> pipes;  // the earlier processes' ends, for each new one to close
  for (int i = 0; i < limits.concurrent_runs; ++i) {
    processes_.push_back(std::make_unique<ApiProcess>(limits, pipes));
    free_.push_back(processes_.back().get());
    const std::vector<int> ends = processes_.back()->pipe_ends();
    pipes.insert(pipes.end(), ends.begin(), ends.end());
  }
  live_ = processes_.size();
}

ApiAnswer ApiPool::machine(const std::string& name) { return ask(kMachine, name); }

ApiAnswer ApiPool::run(const std::string& body) { return ask(kRun, body); }

ApiAnswer ApiPool::train(const std::string& body) { return ask(kTrain, body); }

ApiAnswer ApiPool::ask(char question, const std::string& payload) {
  ApiProcess* lent = nullptr;
  {
    std::unique_lock<std::mutex> lock(lending_);
    if (!returned_.wait_for(lock, std::chrono::duration<double>(wait_s_),
                            [this] { return !free_.empty() || live_ == 0; })) {
      return error_answer(503, fmt::format("every one of the {} runs this server makes at once "
                                           "took more than {:g} s: try again in a moment",
                                           processes_.size(), wait_s_));
    }
    if (live_ == 0) {
      return error_answer(503, "every process answering this server has ended: restart "
                               "gpuscale serve (and please report what it was asked)");
    }
    lent = free_.back();
    free_.pop_back();
  }
  std::optional<ApiAnswer> answered;
  try {
    answered = lent->ask(question, payload);
  } catch (const std::runtime_error&) {
    // It died (our bug, or the system killed it): it is not lent again, and the pool shrinks.
  }
  {
    const std::lock_guard<std::mutex> lock(lending_);
    if (answered) {
      free_.push_back(lent);
    } else {
      --live_;
    }
  }
  returned_.notify_all();
  if (answered) return *answered;
  return error_answer(500, "internal error: the process answering this request ended (please "
                           "report it with the request)");
}

}  // namespace gpuscale::serve
