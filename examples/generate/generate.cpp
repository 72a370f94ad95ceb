// Generates text from a llama2.c checkpoint on a backend picked by name: the library used
// from a program of one's own. Greedy decoding; plugins in LLAMA_PLUGIN_PATH join the
// built-in backends.
//   generate CHECKPOINT TOKENIZER BACKEND PROMPT [STEPS]
#include <charconv>
#include <cstring>
#include <iostream>

#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/generate.hpp"
#include "llama/plugins/loader.hpp"
#include "llama/registry.hpp"
#include "llama/sampler.hpp"
#include "llama/tokenizers/tokenizer.hpp"

int main(int argc, char** argv) {
  int64_t steps = 64;
  if (argc == 6) {
    const char* end = argv[5] + std::strlen(argv[5]);
    if (std::from_chars(argv[5], end, steps).ptr != end || steps < 0) argc = 0;
  }
  if (argc != 5 && argc != 6) {
    std::cerr << "usage: generate CHECKPOINT TOKENIZER BACKEND PROMPT [STEPS]\n";
    return 2;
  }
  try {
    llama::load_plugins_from_environment();
    const llama::Checkpoint checkpoint = llama::Checkpoint::open(argv[1]);
    const llama::Config& config = checkpoint.config();
    const auto tokenizer = llama::open_tokenizer(argv[2], {.vocab_size = config.vocab_size});
    auto backend = llama::BackendRegistry::instance().create(argv[3]);
    backend->prepare(checkpoint.model());

    llama::Sampler greedy(config.vocab_size, /*temperature=*/0.0f, /*top_p=*/0.9f, /*seed=*/1);
    llama::GenerationOptions options;
    options.prompt = argv[4];
    options.steps = steps;
    llama::generate(*backend, config, *tokenizer, greedy, options,
                    [](std::string_view piece) { std::cout << piece << std::flush; });
    std::cout << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "generate: " << e.what() << "\n";
    return 1;
  }
}
