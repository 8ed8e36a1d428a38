#include "sim/collectives/builder.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace gpuscale::coll {
namespace {

std::vector<int> normalised(std::vector<int> deps) {
  std::erase(deps, -1);
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

std::vector<int> joined(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

}  // namespace

ScheduleBuilder::ScheduleBuilder(std::string algorithm, const CollectiveRequest& request) {
  schedule_.algorithm = std::move(algorithm);
  schedule_.ranks = request.ranks;
  schedule_.payload_bytes = request.bytes;
}

int ScheduleBuilder::add(Op op) {
  op.deps = normalised(std::move(op.deps));
  schedule_.ops.push_back(std::move(op));
  return static_cast<int>(schedule_.ops.size()) - 1;
}

int ScheduleBuilder::transfer(int src, int dst, double bytes, int latency_steps,
                              std::vector<int> deps, int pipeline) {
  return add({Op::Kind::Transfer, src, dst, bytes, 0, latency_steps, std::move(deps), pipeline});
}

int ScheduleBuilder::reduce(int rank, double bytes, std::vector<int> deps) {
  return add({Op::Kind::Reduce, rank, -1, bytes, 0, 0, std::move(deps)});
}

int ScheduleBuilder::delay(double seconds, std::vector<int> deps) {
  return add({Op::Kind::Delay, -1, -1, 0, seconds, 0, std::move(deps)});
}

int ScheduleBuilder::optional_delay(double seconds, std::vector<int> deps) {
  return seconds > 0 ? delay(seconds, std::move(deps)) : -1;
}

std::vector<int> ScheduleBuilder::gate(double seconds, std::vector<int> deps) {
  deps = normalised(std::move(deps));
  if (seconds > 0 || deps.size() > 1) return {delay(seconds, std::move(deps))};
  return deps;
}

void binomial_reduce(ScheduleBuilder& b, const std::vector<int>& group, int root_index,
                     double bytes, Ready& ready) {
  const int m = static_cast<int>(group.size());
  auto rank_of = [&](int v) { return group[(v + root_index) % m]; };
  for (int mask = 1; mask < m; mask <<= 1) {
    for (int v = mask; v < m; v += 2 * mask) {  // lowest set bit of v is mask
      const int child = rank_of(v), parent = rank_of(v - mask);
      // A blocking receive (rendezvous for large messages): the parent must be ready too.
      const int sent = b.transfer(child, parent, bytes, 1, joined(ready[child], ready[parent]));
      ready[child] = {sent};
      ready[parent] = {b.reduce(parent, kSumTrafficPerByte * bytes, {sent})};
    }
  }
}

void binomial_broadcast(ScheduleBuilder& b, const std::vector<int>& group, int root_index,
                        double bytes, Ready& ready) {
  const int m = static_cast<int>(group.size());
  auto rank_of = [&](int v) { return group[(v + root_index) % m]; };
  int top = 1;
  while (top < m) top <<= 1;
  for (int mask = top >> 1; mask >= 1; mask >>= 1) {
    for (int v = 0; v + mask < m; v += 2 * mask) {  // v has no set bit at or below mask
      const int parent = rank_of(v), child = rank_of(v + mask);
      const int sent = b.transfer(parent, child, bytes, 1, joined(ready[parent], ready[child]));
      ready[parent] = {sent};  // blocking sends: the next one follows this one
      ready[child] = {sent};
    }
  }
}

void mpi_ring_allreduce(ScheduleBuilder& b, const std::vector<int>& order, double bytes,
                        const std::vector<int>& start, Ready& ready) {
  const int n = static_cast<int>(order.size());
  if (n < 2) return;
  const double block_bytes = double(n - 1) / n * bytes;
  std::vector<int> scatter(n), reduced(n), gather(n);
  for (int i = 0; i < n; ++i) {
    scatter[i] = b.transfer(order[i], order[(i + 1) % n], block_bytes, n - 1, start);
  }
  for (int i = 0; i < n; ++i) {
    const int in = scatter[(i + n - 1) % n], out = scatter[i];
    reduced[i] = b.reduce(order[i], kSumTrafficPerByte * block_bytes, {in, out});
  }
  for (int i = 0; i < n; ++i) {
    gather[i] = b.transfer(order[i], order[(i + 1) % n], block_bytes, n - 1, {reduced[i]});
  }
  for (int i = 0; i < n; ++i) ready[order[i]] = {gather[(i + n - 1) % n], gather[i]};
}

std::vector<int> pipelined_chain(ScheduleBuilder& b, const std::vector<int>& chain, double bytes,
                                 const std::vector<int>& deps, int pipeline) {
  const int hops = static_cast<int>(chain.size()) - 1;
  std::vector<int> flows;
  for (int i = 0; i < hops; ++i) {
    flows.push_back(b.transfer(chain[i], chain[i + 1], bytes, hops, deps, pipeline));
  }
  return flows;
}

int node_count(const CollectiveRequest& request) {
  if (request.node_of_rank.empty()) return 1;
  const std::set<int> nodes(request.node_of_rank.begin(), request.node_of_rank.end());
  return static_cast<int>(nodes.size());
}

int ceil_log2(int n) {
  if (n < 1) throw std::invalid_argument("ceil_log2: n must be >= 1");
  int k = 0;
  while ((1L << k) < n) ++k;
  return k;
}

}  // namespace gpuscale::coll
