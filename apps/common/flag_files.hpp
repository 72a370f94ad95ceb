// Files named on the command line: the size each kind may have, the one bounded
// read every app uses for them, and the check that keeps devices and FIFOs away
// from the checkpoint and tokenizer readers. Limits and why: docs/robustness.md,
// "Files named on the command line".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace llama::cli {

// A Jinja chat template: real ones are 1-20 KB; 1 MiB is fifty times the largest.
inline constexpr int64_t kMaxChatTemplateBytes = int64_t{1} << 20;
// tokenizer_config.json (--chat-template x.json, llama-template --template x.json, the
// one beside the tokenizer): the same limit as the core's own reader of it
// (common/chat/model_template.cpp); its added_tokens_decoder can be long.
inline constexpr int64_t kMaxTokenizerConfigBytes = int64_t{64} << 20;
// llama-template --messages: a conversation, tools included; 16 MiB is millions of
// tokens, more than any model's context.
inline constexpr int64_t kMaxMessagesBytes = int64_t{16} << 20;

// read_text_file(path, max_bytes, what) with the flag in front of its errors, so the
// line names both: "--chat-template: /tmp: not a regular file (a directory)".
std::string read_flag_file(std::string_view flag, const std::string& path, int64_t max_bytes,
                           std::string_view what);

// Refuses `path` when it exists and is neither a regular file nor a directory (a
// device, a FIFO, a socket): checkpoints and tokenizers go through readers that sniff
// the first bytes before the one that maps the file checks its type, and sniffing a
// FIFO waits for a writer forever. Throws Error "<flag>: <path>: not a regular file
// (a FIFO)". A path that does not exist is left to the reader, whose message says so.
void require_file_or_directory(std::string_view flag, const std::string& path);

}  // namespace llama::cli
