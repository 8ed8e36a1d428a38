// The API's answers (serve_api.hpp), computed in a process of their own forked before the server
// starts its threads: a run forks its simulation, and a fork is safe only from a process whose
// other threads hold no locks. One question at a time; the process ends with its owner.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>

#include "tools/serve/serve_api.hpp"

namespace gpuscale::serve {

// An HTTP status and a JSON body: the answer, or {"error": "one line"} with 400 (bad input),
// 503 (a run past its time) or 500 (our bug).
struct ApiAnswer {
  int status = 200;
  std::string json;
};

class ApiProcess {
 public:
  explicit ApiProcess(const Limits& limits);
  ~ApiProcess();
  ApiProcess(const ApiProcess&) = delete;
  ApiProcess& operator=(const ApiProcess&) = delete;

  ApiAnswer machine(const std::string& name);
  ApiAnswer run(const std::string& body);

 private:
  ApiAnswer ask(char question, const std::string& payload);

  pid_t pid_ = -1;
  int to_ = -1;    // questions
  int from_ = -1;  // answers
  std::mutex asking_;
};

}  // namespace gpuscale::serve
