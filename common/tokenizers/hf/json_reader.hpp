// tokenizer.json read in one pass with nlohmann-json's SAX interface: the
// large model.vocab and model.merges go straight into a BpeModelSpec (no DOM
// for 128K entries and 280K merges); everything else becomes a small DOM.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "llama/tokenizers/bpe_tokenizer.hpp"

namespace llama::hf {

struct TokenizerJson {
  nlohmann::json rest;  // the document without model.vocab and model.merges
  BpeModelSpec model;   // vocab and merges resolved to ids
  bool has_vocab = false;
  bool has_merges = false;
};

// Throws Error "<source>: ..." on malformed JSON (with the byte offset) and
// on a vocab or merges entry that does not fit.
TokenizerJson read_tokenizer_json(std::string_view text, const std::string& source);

}  // namespace llama::hf
