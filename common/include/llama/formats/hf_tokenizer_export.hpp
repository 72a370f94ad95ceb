// tokenizer.json and tokenizer_config.json for a llama2.c tokenizer.bin, as
// transformers' LlamaConverter writes them from the SentencePiece model that
// tokenizer.bin was exported from: the same vocabulary ("▁" for the spaces
// tokenizer.bin stores, <unk> <s> </s> first), BPE merges recovered from the
// piece scores (SentencePieceExtractor's rule), byte fallback, and the legacy
// Llama normalizer, decoder and BOS post-processor. llama-convert --to hf uses
// them; the shared hf/stories1M and hf/llama2-tokenizer files are what this
// produces for tok2048.bin and tokenizer.bin.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace llama {

// `pieces` and `scores` as tokenizer.bin holds them (id order). Throws Error
// naming `source` unless ids 0, 1, 2 are <unk>, BOS ("\n<s>\n") and EOS
// ("\n</s>\n") as llama2.c's export writes them, every piece is UTF-8 and no
// score is NaN.
std::string sentencepiece_tokenizer_json(std::span<const std::string> pieces,
                                         std::span<const float> scores, const std::string& source);

// The matching tokenizer_config.json (LlamaTokenizer, BOS added, no EOS).
std::string sentencepiece_tokenizer_config_json(int64_t model_max_length);

}  // namespace llama
