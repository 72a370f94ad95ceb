// JSON for files from strangers (config.json, generation_config.json,
// model.safetensors.index.json): a DOM built through nlohmann's SAX interface
// that refuses what its default parser lets through silently (a duplicate key,
// where the last one would win) and what would exhaust memory or the stack
// (nesting deeper than kMaxJsonDepth, a file larger than the caller's limit).
// Private to the core: nlohmann stays out of the public headers.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "llama/mapped_file.hpp"  // read_text_file, the bounded read these files go through

namespace llama {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws Error "<source>: invalid JSON: <why>" (byte offset
// included) on a syntax error, a duplicate key or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_strict_json(std::string_view text, const std::string& source);

// What `j` is, for messages: "an object", "an array", "a string", "a number", "a boolean", "null".
std::string json_kind(const nlohmann::json& j);

// The value as it appears in the file, cut to a readable length.
std::string json_excerpt(const nlohmann::json& j);

}  // namespace llama
