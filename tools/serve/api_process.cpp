#include "tools/serve/api_process.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <stdexcept>

#include "topologies/core/error.hpp"

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

ApiProcess::ApiProcess(const Limits& limits) {
  int questions[2], answers[2];
  if (::pipe(questions) != 0 || ::pipe(answers) != 0)
    throw std::runtime_error("serve: pipe failed");
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("serve: fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it serves nobody once the server is gone
    if (::getppid() != parent) ::_exit(1);
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

ApiAnswer ApiProcess::ask(char question, const std::string& payload) {
  ApiAnswer a;
  if (!send(to_, question, payload) || !receive(from_, a.status, a.json))
    throw std::runtime_error("serve: the process that answers the API is gone");
  return a;
}

ApiPool::ApiPool(const Limits& limits) : wait_s_(limits.max_run_seconds) {
  for (int i = 0; i < limits.concurrent_runs; ++i) {
    processes_.push_back(std::make_unique<ApiProcess>(limits));
    free_.push_back(processes_.back().get());
  }
}

ApiPool::~ApiPool() {
  // The last forked first: each process holds copies of the pipes of those forked before it, so
  // an earlier one sees its questions end only once every later one has exited.
  while (!processes_.empty()) processes_.pop_back();
}

ApiAnswer ApiPool::machine(const std::string& name) { return ask(kMachine, name); }

ApiAnswer ApiPool::run(const std::string& body) { return ask(kRun, body); }

ApiAnswer ApiPool::train(const std::string& body) { return ask(kTrain, body); }

ApiAnswer ApiPool::ask(char question, const std::string& payload) {
  ApiProcess* lent = nullptr;
  {
    std::unique_lock<std::mutex> lock(lending_);
    if (!returned_.wait_for(lock, std::chrono::duration<double>(wait_s_),
                            [this] { return !free_.empty(); })) {
      return error_answer(503, fmt::format("every one of the {} runs this server makes at once "
                                           "took more than {:g} s: try again in a moment",
                                           processes_.size(), wait_s_));
    }
    lent = free_.back();
    free_.pop_back();
  }
  // Given back however the question ends, so that a failure does not shrink the pool.
  struct GiveBack {
    ApiPool& pool;
    ApiProcess* process;
    ~GiveBack() {
      {
        const std::lock_guard<std::mutex> lock(pool.lending_);
        pool.free_.push_back(process);
      }
      pool.returned_.notify_one();
    }
  } give_back{*this, lent};
  return lent->ask(question, payload);
}

}  // namespace gpuscale::serve
