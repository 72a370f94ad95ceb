// RowTeam (llama/row_team.hpp): every chunk runs exactly once whatever the
// thread count and however the shares are taken, outside a session the
// caller runs everything, a body's exception reaches the caller, and the
// workers do take chunks.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "llama/error.hpp"
#include "llama/row_team.hpp"

using namespace llama;

TEST_CASE("row team: each chunk exactly once, in sessions, on 1-4 threads", "[row_team]") {
  for (const int threads : {1, 2, 3, 4}) {
    RowTeam team(threads);
    const RowTeam::Session session(team);
    for (const int64_t chunks : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7},
                                 int64_t{64}, int64_t{1000}, RowTeam::kMaxChunks}) {
      INFO(threads << " threads, " << chunks << " chunks");
      std::vector<std::atomic<int>> runs(static_cast<size_t>(chunks));
      // Many runs back to back: a worker late for one job must not take a
      // chunk of the next (the claim words' generation).
      const int repeats = chunks > 1000 ? 3 : 300;
      std::atomic<bool> bad_range{false};  // Catch's assertions are for this thread only
      for (int r = 0; r < repeats; ++r) {
        team.run(chunks, [&](int64_t b, int64_t e) {
          if (b < 0 || b >= e || e > chunks) bad_range = true;
          for (int64_t c = b; c < e && !bad_range; ++c) runs[size_t(c)].fetch_add(1);
        });
      }
      REQUIRE_FALSE(bad_range.load());
      for (int64_t c = 0; c < chunks; ++c) REQUIRE(runs[size_t(c)].load() == repeats);
    }
  }
}

TEST_CASE("row team: outside a session the caller runs every chunk at once", "[row_team]") {
  RowTeam team(3);
  CHECK_FALSE(team.in_session());
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  int64_t begin = -1, end = -1;
  bool on_caller = true;
  team.run(10, [&](int64_t b, int64_t e) {  // on this thread only, so plain variables
    ++calls;
    begin = b;
    end = e;
    on_caller = std::this_thread::get_id() == caller;
  });
  CHECK(calls == 1);
  CHECK(begin == 0);
  CHECK(end == 10);
  CHECK(on_caller);
  {
    const RowTeam::Session session(team);
    CHECK(team.in_session());
  }
  CHECK_FALSE(team.in_session());
}

TEST_CASE("row team: the workers take chunks, a body's exception reaches the caller",
          "[row_team]") {
  RowTeam team(2);
  const RowTeam::Session session(team);
  // Chunks long enough (200 us) that the worker, spinning in the session,
  // takes some of them before the caller is through its share.
  const auto caller = std::this_thread::get_id();
  std::atomic<int> on_worker{0};
  team.run(40, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      if (std::this_thread::get_id() != caller) on_worker.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::cout << "row team: the worker ran " << on_worker.load() << " of 40 chunks\n";
  CHECK(on_worker.load() > 0);

  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(team.run(64,
                             [&](int64_t b, int64_t e) {
                               ran.fetch_add(static_cast<int>(e - b));
                               if (b <= 40 && 40 < e) throw std::runtime_error("chunk 40");
                             }),
                    "chunk 40");
  CHECK(ran.load() == 64);  // the other chunks still ran
  std::atomic<int> after{0};
  team.run(5, [&](int64_t b, int64_t e) { after.fetch_add(static_cast<int>(e - b)); });
  CHECK(after.load() == 5);  // still usable
}

TEST_CASE("row team refuses bad sizes", "[row_team][bad-input]") {
  CHECK_THROWS_AS(RowTeam(0), Error);
  RowTeam team(2);
  const RowTeam::Session session(team);
  CHECK_THROWS_WITH(team.run(RowTeam::kMaxChunks + 1, [](int64_t, int64_t) {}),
                    Catch::Matchers::Contains("chunks"));
}
