// gguf-parity.json's cases as the GGUF tests take them: those whose files hold
// only tensor types this build runs. The reference also carries cases for
// types the readers do not run yet; each of those is checked to be refused
// with the reader's one-line error naming the type, and said on stdout, so a
// case is never dropped silently and turns into a parity case by itself the
// day its type is supported (gguf::supported_type).
#pragma once

#include <nlohmann/json.hpp>

namespace llama::test {

// The runnable cases of gguf-parity.json, in file order; fails the test when
// the file holds fewer than `at_least` of them.
nlohmann::json runnable_gguf_cases(size_t at_least = 6);

}  // namespace llama::test
