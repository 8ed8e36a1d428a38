// The API's answers (serve_api.hpp), computed in processes of their own forked before the server
// starts its threads: a run forks its simulation, and a fork is safe only from a process whose
// other threads hold no locks. Each process answers one question at a time; a pool of them lets
// a class run side by side, so that one long run holds one process, not the server.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tools/serve/serve_api.hpp"

namespace gpuscale::serve {

// An HTTP status and a JSON body: the answer, or {"error": "one line"} with 400 (bad input),
// 503 (a run past its time) or 500 (our bug).
struct ApiAnswer {
  int status = 200;
  std::string json;
};

// One answering process; it ends with its owner.
class ApiProcess {
 public:
  // `others`: the pipe ends of the processes forked before it, which it closes.
  ApiProcess(const Limits& limits, const std::vector<int>& others);
  ~ApiProcess();
  ApiProcess(const ApiProcess&) = delete;
  ApiProcess& operator=(const ApiProcess&) = delete;

  // The answer to a question (ApiPool's tags) about `payload`; one caller at a time. Throws
  // std::runtime_error if the process is gone.
  ApiAnswer ask(char question, const std::string& payload);
  std::vector<int> pipe_ends() const;

 private:
  pid_t pid_ = -1;
  int to_ = -1;    // questions
  int from_ = -1;  // answers
};

// Limits::concurrent_runs answering processes. A question takes the first one free; one that
// finds none free within Limits::max_run_seconds (every process held by a run that long) is
// answered 503, as a run past its time is. A process that dies is answered 500 and not lent
// again; with none left, every question is answered 503.
class ApiPool {
 public:
  explicit ApiPool(const Limits& limits);

  ApiAnswer machine(const std::string& name);
  ApiAnswer run(const std::string& body);
  ApiAnswer train(const std::string& body);

 private:
  ApiAnswer ask(char question, const std::string& payload);

  double wait_s_;
  std::vector<std::unique_ptr<ApiProcess>> processes_;
  std::vector<ApiProcess*> free_;
  std::size_t live_ = 0;  // processes not known to be dead
  std::mutex lending_;
  std::condition_variable returned_;
};

}  // namespace gpuscale::serve
