// FUZZ_CHECK: a property every fuzz input must keep; a violation aborts with
// the reason, which libFuzzer reports as a crash and saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, why)                                           \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s)\n", why, #cond); \
      std::abort();                                                     \
    }                                                                   \
  } while (0)
