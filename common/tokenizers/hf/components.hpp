// tokenizer.json's components (normalizer, pre_tokenizer, model options,
// added_tokens, post_processor, decoder) into a BpeTokenizerSpec, refusing
// any type outside the BPE families this project reads, by name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::hf {

// `doc`: tokenizer.json without model.vocab / model.merges (json_reader.hpp);
// spec.model's vocab and merges are already filled.
void read_components(const nlohmann::json& doc, BpeTokenizerSpec& spec);

}  // namespace llama::hf
