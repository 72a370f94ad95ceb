// Hugging Face tokenizer.json (model type BPE) and tokenizer_config.json into a
// BpeTokenizer: SentencePiece-style (Llama 2, Mistral, TinyLlama) and
// byte-level (GPT-2, Llama 3) files. Any component outside those families
// (WordPiece, Unigram, other normalizers, pre-tokenizers, post-processors,
// decoders) is refused with one line naming it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama {

// Reads `tokenizer_json`, and `tokenizer_config` when not empty (its
// add_bos_token / add_eos_token replace the post-processor's specials;
// bos_token, eos_token, unk_token, pad_token name the special ids).
std::unique_ptr<BpeTokenizer> load_hf_tokenizer(const std::string& tokenizer_json,
                                                const std::string& tokenizer_config = "");

// The same from text in memory; `source` names the tokenizer.json in errors,
// `config_json` empty means no tokenizer_config.json.
std::unique_ptr<BpeTokenizer> parse_hf_tokenizer(std::string_view json,
                                                 std::string_view config_json,
                                                 const std::string& source,
                                                 const std::string& config_source = "");

}  // namespace llama
