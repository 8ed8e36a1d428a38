// Runs a function in a child process and returns what it printed: SimGrid allows one engine per
// process, and an experiment simulates many configurations. A ConfigError in the child comes back
// as a ConfigError with the same one-line message; any other failure as std::runtime_error.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <type_traits>

namespace gpuscale::sim {

std::string run_isolated(const std::function<std::string()>& work);

// A typed result crosses the pipe as JSON by its type's one codec (to_json and from_json in the
// type's namespace, in a *_codec.hpp beside it): the child encodes it, the parent decodes it, so
// no job writes JSON by hand. nlohmann writes a double as the shortest text that reads back as
// the same double, so every double comes back bit for bit.
template <class T>
std::string encode_result(const T& result) {
  return nlohmann::json(result).dump();
}
template <class T>
T decode_result(const std::string& text) {
  return nlohmann::json::parse(text).get<T>();
}

// run_isolated for a function returning a result with a codec: what it returned, decoded.
template <class Work>
std::decay_t<std::invoke_result_t<Work&>> run_isolated_as(Work&& work) {
  using Result = std::decay_t<std::invoke_result_t<Work&>>;
  return decode_result<Result>(run_isolated([&work] { return encode_result(work()); }));
}

// The same in two halves, for running several children at once (sweep/process_pool.hpp): a
// child started on `work`, whose pipe the caller reads to its end before reaping the child...
struct IsolatedChild {
  int pid = -1;
  int fd = -1;  // the read end of the child's pipe
};
IsolatedChild start_isolated(const std::function<std::string()>& work);
// ...and, from everything the child wrote, its result (or its exception, rethrown). Reaps it.
std::string finish_isolated(const IsolatedChild& child, const std::string& written);

}  // namespace gpuscale::sim
