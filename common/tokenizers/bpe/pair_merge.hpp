// The pair-merge loop every BPE tokenizer here runs (llama2.c by score,
// tokenizer.json and GGUF by merge rank): repeatedly merge the adjacent pair
// with the best key, the leftmost among equal keys, until no pair merges.
// A linked list over the symbols and a priority queue of candidate pairs
// (stale entries skipped when popped), as Hugging Face's tokenizers and
// tiktoken do: O(n log n) in the number of symbols, where rescanning every
// pair after each merge (run.c) is O(n^2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

namespace llama::bpe {

// What merging a pair gives: `key` orders merges (smaller first), `id` is the
// merged token.
template <typename Key>
struct PairMerge {
  Key key;
  int32_t id;
};

// `symbols`: token ids in text order (all >= 0), replaced by the merged ones.
// `merge_of(left, right)` returns std::optional<PairMerge<Key>>: nullopt when
// the pair does not merge.
template <typename Key, typename MergeOf>
void merge_pairs(std::vector<int32_t>& symbols, const MergeOf& merge_of) {
  const size_t n = symbols.size();
  if (n < 2) return;
  constexpr int32_t kDead = -1;  // a symbol merged into its left neighbour
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> next(n);  // linked list over the live symbols
  std::vector<uint32_t> prev(n);
  for (size_t i = 0; i < n; ++i) {
    next[i] = i + 1 < n ? static_cast<uint32_t>(i + 1) : kNone;
    prev[i] = i > 0 ? static_cast<uint32_t>(i - 1) : kNone;
  }
  struct Candidate {
    Key key;
    uint32_t left, right;       // node indices (original positions: their order is text order)
    int32_t left_id, right_id;  // the ids when queued; a change makes the entry stale
    int32_t merged;
  };
  // Worse first for std::priority_queue: larger key, then the pair further right.
  auto worse = [](const Candidate& a, const Candidate& b) {
    if (b.key < a.key) return true;
    if (a.key < b.key) return false;
    return a.left > b.left;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  auto consider = [&](uint32_t left) {
    if (left == kNone) return;
    const uint32_t right = next[left];
    if (right == kNone) return;
    const std::optional<PairMerge<Key>> m = merge_of(symbols[left], symbols[right]);
    if (m) queue.push(Candidate{m->key, left, right, symbols[left], symbols[right], m->id});
  };
  for (size_t i = 0; i + 1 < n; ++i) consider(static_cast<uint32_t>(i));

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    // Stale: either side merged since (a dead node, a new neighbour or a new id).
    if (symbols[c.left] != c.left_id || next[c.left] != c.right || symbols[c.right] != c.right_id) {
      continue;
    }
    symbols[c.left] = c.merged;
    symbols[c.right] = kDead;
    next[c.left] = next[c.right];
    if (next[c.right] != kNone) prev[next[c.right]] = c.left;
    consider(prev[c.left]);
    consider(c.left);
  }
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    if (symbols[i] != kDead) symbols[out++] = symbols[i];
  }
  symbols.resize(out);
}

}  // namespace llama::bpe
