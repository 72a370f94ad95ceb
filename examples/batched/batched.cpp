// Completes several prompts at once: one backend holding a sequence per prompt, and
// llama::BatchGenerator stepping them all in one forward_runs call a step. Greedy,
// at most 48 tokens each; each completion is printed when it ends, then all of them
// in the order given. Plugins in LLAMA_PLUGIN_PATH join the built-in backends.
//   batched CHECKPOINT TOKENIZER BACKEND PROMPT...
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "llama/batch_generator.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/plugins/loader.hpp"
#include "llama/registry.hpp"
#include "llama/tokenizers/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: batched CHECKPOINT TOKENIZER BACKEND PROMPT...\n";
    return 2;
  }
  const std::vector<std::string> prompts(argv + 4, argv + argc);
  try {
    llama::load_plugins_from_environment();
    const llama::Checkpoint checkpoint = llama::Checkpoint::open(argv[1]);
    const llama::Config& config = checkpoint.config();
    const auto tokenizer = llama::open_tokenizer(argv[2], {.vocab_size = config.vocab_size});
    // A sequence (its own KV cache) per prompt; a backend that holds one sequence
    // is run by replay (correct, not fast).
    llama::BackendOptions options;
    options.sequences = static_cast<int32_t>(prompts.size());
    auto backend = llama::BackendRegistry::instance().create(argv[3], options);
    backend->prepare(checkpoint.model());

    llama::BatchGenerator generator(*backend, config, *tokenizer);
    std::map<uint64_t, size_t> prompt_of;      // request id -> index in prompts
    std::map<size_t, llama::Completion> done;  // index in prompts -> its completion
    for (size_t i = 0; i < prompts.size(); ++i) {
      llama::GenerationRequest request;
      request.prompt = tokenizer->encode(prompts[i], {.add_special = true});
      request.max_tokens = 48;  // greedy: the default SamplingSettings
      request.on_finish = [&](const llama::Completion& c) {
        const size_t at = prompt_of.at(c.id);
        std::cerr << "finished " << at << " (" << llama::to_string(c.stop_reason) << ", "
                  << c.usage.completion_tokens << " tokens)\n";
        done[at] = c;
      };
      prompt_of[generator.add(std::move(request))] = i;
    }
    generator.run();
    for (size_t i = 0; i < prompts.size(); ++i) {
      std::cout << "--- " << i << "\n" << prompts[i] << done.at(i).text << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "batched: " << e.what() << "\n";
    return 1;
  }
}
