#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpubench/core/chunked_vector.hpp"
#include "gpubench/core/parallel.hpp"
#include "gpubench/harness/thread_pool.hpp"

using gpubench::pinned_thread_pool;

TEST_CASE("every worker runs the task once per run", "[thread_pool]") {
  pinned_thread_pool pool(3);
  CHECK(pool.size() == 3);
  for (int round = 0; round < 50; ++round) {
    std::mutex m;
    std::multiset<int> seen;
    pool.run([&](int worker) {
      std::lock_guard lock(m);
      seen.insert(worker);
    });
    CHECK(seen == std::multiset<int>{0, 1, 2});
  }
}

TEST_CASE("workers are pinned to the cores this process may use", "[thread_pool]") {
  const auto places = gpubench::available_core_cpus();
  REQUIRE_FALSE(places.empty());
  pinned_thread_pool pool(static_cast<int>(places.size()));
  std::set<int> bound(pool.bound_cpus().begin(), pool.bound_cpus().end());
  CHECK(bound == std::set<int>(places.begin(), places.end()));
}

TEST_CASE("a task's exception reaches the caller and the pool stays usable", "[thread_pool]") {
  pinned_thread_pool pool(2);
  CHECK_THROWS_WITH(pool.run([](int worker) {
    if (worker == 1) throw std::runtime_error("worker 1 failed");
  }),
                    "worker 1 failed");
  std::atomic<int> count{0};
  pool.run([&](int) { ++count; });
  CHECK(count == 2);
  CHECK_THROWS_AS(pinned_thread_pool(0), std::invalid_argument);
}

TEST_CASE("parallel_for calls every index once, in ranges, and rethrows a failure",
          "[thread_pool]") {
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{4097}}) {
    std::vector<std::atomic<int>> calls(n);
    std::atomic<std::size_t> largest{0};
    gpubench::parallel_for(n, 64, [&](std::size_t begin, std::size_t end) {
      REQUIRE(begin < end);
      std::size_t seen = largest;
      while (end - begin > seen && !largest.compare_exchange_weak(seen, end - begin)) {
      }
      for (std::size_t i = begin; i < end; ++i) ++calls[i];
    });
    for (const auto& c : calls) CHECK(c == 1);
    CHECK(largest <= 64);
  }
  // The first failure stops the ranges not yet started and reaches the caller. The other ranges
  // take a while each: a core that runs them while the failing range's thread is descheduled
  // (a loaded CI machine) would need seconds, not microseconds, to run them all.
  std::atomic<int> ranges{0};
  CHECK_THROWS_WITH(
      gpubench::parallel_for(100000, 1,
                             [&](std::size_t begin, std::size_t) {
                               ++ranges;
                               if (begin == 3) throw std::runtime_error("range 3");
                               std::this_thread::sleep_for(std::chrono::microseconds(100));
                             }),
      "range 3");
  CHECK(ranges < 100000);
  // A cap of one thread: every range on the calling thread.
  const auto caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  gpubench::parallel_for(
      1000, 1,
      [&](std::size_t, std::size_t) {
        if (std::this_thread::get_id() != caller) ++elsewhere;
      },
      1);
  CHECK(elsewhere == 0);
}

TEST_CASE("a chunked vector keeps appended parts in order, and indexes and walks them as one",
          "[chunked_vector]") {
  gpubench::chunked_vector<int> v;
  CHECK(v.empty());
  CHECK(v.begin() == v.end());
  v.push_back(0);
  v.append({1, 2, 3});
  v.append({});  // an empty part adds nothing
  std::vector<int> part{4, 5};
  const int* kept = part.data();
  v.append(std::move(part));
  CHECK(&v[4] == kept);  // appended where it lay: nothing moved
  v.push_back(6);        // into the last part
  REQUIRE(v.size() == 7);
  std::vector<int> walked;
  for (const int x : v) walked.push_back(x);
  CHECK(walked == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(v[i] == static_cast<int>(i));
  for (int& x : v) x *= 2;
  const auto& same = v;
  CHECK(same[6] == 12);
  CHECK(same.back() == 12);
  CHECK(std::count_if(same.begin(), same.end(), [](int x) { return x > 4; }) == 4);
  std::size_t in_chunks = 0;
  for (const auto& chunk : same.chunks()) in_chunks += chunk.size();
  CHECK(in_chunks == 7);
  gpubench::chunked_vector<int>::const_iterator from_mutable = v.begin();
  CHECK(from_mutable == same.begin());
  CHECK(*++from_mutable == 2);
  // Moved from, it is empty, and takes elements again.
  gpubench::chunked_vector<int> taken = std::move(v);
  CHECK(taken.size() == 7);
  CHECK(v.size() == 0);  // NOLINT(bugprone-use-after-move): the state a move leaves is the point
  CHECK(v.begin() == v.end());
  v.push_back(9);
  CHECK((v.size() == 1 && v[0] == 9 && v.back() == 9));
}
