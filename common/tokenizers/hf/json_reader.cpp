// read_tokenizer_json: a SAX handler that builds a DOM except under
// model.vocab (piece -> id) and model.merges ("a b" or ["a", "b"]).
#include "json_reader.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "llama/error.hpp"

namespace llama::hf {
namespace {

using nlohmann::json;

// Vocabularies past this are refused before allocating for them.
constexpr uint64_t kMaxVocab = 1u << 24;
constexpr size_t kMaxDepth = 512;
// A string in the pipeline's components: the longest they hold is a Split
// regex (bpe/limits.hpp: 4096 bytes). Refused as it is read, so a file of 400
// Prepend steps of 100 KB stops at the first rather than being read whole.
constexpr size_t kMaxComponentString = 4096;
// Values (strings, numbers, objects, arrays) in the four components together: real
// pipelines hold tens to a few hundred (Llama 3's post_processor, the largest, about
// 60). A TemplateProcessing of a million special tokens took 20 s and 1 GB to parse
// and build; it stops here as it is read.
constexpr size_t kMaxComponentValues = 65536;

class Reader final : public nlohmann::json_sax<json> {
 public:
  // `bytes`: the file's size. Each vocab entry takes at least 5 of them
  // ("":0,), so an id past bytes / 4 leaves a gap whatever follows: refused
  // before anything is allocated for it (a 147-byte file once asked for 12
  // million entries).
  Reader(const std::string& source, size_t bytes)
      : source_(source), max_id_(std::min<uint64_t>(kMaxVocab, bytes / 4 + 1)) {}

  TokenizerJson finish() {
    resolve_pending_merges();
    for (size_t id = 0; id < out_.model.vocab.size(); ++id) {
      if (!seen_[id]) {
        throw Error(source_ + ": model.vocab has no entry for id " + std::to_string(id) +
                    " (ids must run from 0 without gaps)");
      }
    }
    return std::move(out_);
  }

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override {
    if (mode_ == Mode::vocab) return vocab_id(v < 0 ? -1 : static_cast<int64_t>(v));
    return value(json(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (mode_ == Mode::vocab) {
      return vocab_id(v > kMaxVocab ? static_cast<int64_t>(kMaxVocab) : static_cast<int64_t>(v));
    }
    return value(json(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (mode_ == Mode::vocab) fail("model.vocab: the id of \"" + key_ + "\" is not an integer");
    return value(json(v));
  }
  bool string(string_t& s) override {
    if (mode_ == Mode::vocab) fail("model.vocab: the id of \"" + key_ + "\" is not an integer");
    if (mode_ == Mode::merges) return merge_line(s);
    if (mode_ == Mode::merge_pair) {
      if (pair_.size() >= 2)
        fail("model.merges entry " + std::to_string(merge_count_) + " has more than two parts");
      pair_.push_back(std::move(s));
      return true;
    }
    if (s.size() > kMaxComponentString && in_component()) {
      fail(where() + " is a " + std::to_string(s.size()) + "-byte string, more than " +
           std::to_string(kMaxComponentString));
    }
    return value(json(std::move(s)));
  }
  bool binary(binary_t&) override { fail("unexpected binary value"); }

  bool start_object(std::size_t) override {
    if (mode_ != Mode::dom) fail(where() + " holds an object where none belongs");
    if (path_is("model", "vocab")) {
      if (out_.has_vocab) fail("model.vocab appears twice");
      out_.has_vocab = true;
      mode_ = Mode::vocab;
      return true;
    }
    if (path_is("model", "merges")) fail("model.merges must be an array");
    return open(json::object());
  }
  bool end_object() override {
    if (mode_ == Mode::vocab) {
      mode_ = Mode::dom;
      vocab_done();
      return close_key();
    }
    return close();
  }
  bool start_array(std::size_t) override {
    if (mode_ == Mode::vocab) fail("model.vocab: the id of \"" + key_ + "\" is not an integer");
    if (mode_ == Mode::merges) {
      mode_ = Mode::merge_pair;
      pair_.clear();
      return true;
    }
    if (mode_ == Mode::merge_pair)
      fail("model.merges entry " + std::to_string(merge_count_) + " is nested too deep");
    if (path_is("model", "merges")) {
      if (out_.has_merges) fail("model.merges appears twice");
      out_.has_merges = true;
      mode_ = Mode::merges;
      return true;
    }
    if (path_is("model", "vocab")) fail("model.vocab must be an object");
    return open(json::array());
  }
  bool end_array() override {
    if (mode_ == Mode::merge_pair) {
      mode_ = Mode::merges;
      if (pair_.size() != 2)
        fail("model.merges entry " + std::to_string(merge_count_) + " is not a pair");
      add_merge(pair_[0], pair_[1]);
      return true;
    }
    if (mode_ == Mode::merges) {
      mode_ = Mode::dom;
      return close_key();
    }
    return close();
  }
  bool key(string_t& k) override {
    if (mode_ == Mode::vocab) {
      key_ = std::move(k);
      return true;
    }
    keys_.back() = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    const size_t colon = what.find("]");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw Error(source_ + ": malformed JSON near byte " + std::to_string(position) + ": " + what);
  }

 private:
  enum class Mode { dom, vocab, merges, merge_pair };

  [[noreturn]] void fail(const std::string& why) const { throw Error(source_ + ": " + why); }

  std::string where() const {
    std::string w;
    for (size_t i = 0; i < keys_.size(); ++i) w += (i && keys_[i] != "[]" ? "." : "") + keys_[i];
    return w.empty() ? "the document" : w;
  }
  // True inside the normalizer, pre_tokenizer, post_processor or decoder.
  bool in_component() const {
    if (keys_.empty()) return false;
    const std::string& top = keys_.front();
    return top == "normalizer" || top == "pre_tokenizer" || top == "post_processor" ||
           top == "decoder";
  }
  // True when the value about to start sits at document.a.b.
  bool path_is(const char* a, const char* b) const {
    return stack_.size() == 2 && keys_.size() == 2 && keys_[0] == a && keys_[1] == b &&
           stack_[1]->is_object();
  }

  // Places `v` in the current container; returns where it went.
  json* place(json&& v) {
    if (stack_.empty()) {
      if (!root_set_) {
        out_.rest = std::move(v);
        root_set_ = true;
        return &out_.rest;
      }
      fail("more than one top-level value");
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[keys_.back()];
    slot = std::move(v);
    return &slot;
  }
  // Counts a value inside the components against kMaxComponentValues.
  void count_component_value() {
    if (!in_component() || ++component_values_ <= kMaxComponentValues) return;
    fail(where() + ": the normalizer, pre_tokenizer, post_processor and decoder hold more than " +
         std::to_string(kMaxComponentValues) + " values");
  }
  bool value(json&& v) {
    if (mode_ != Mode::dom)
      fail("model.merges entry " + std::to_string(merge_count_) + " is not text");
    count_component_value();
    place(std::move(v));
    return true;
  }
  bool open(json&& container) {
    if (stack_.size() >= kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth));
    count_component_value();
    const bool is_object = container.is_object();
    stack_.push_back(place(std::move(container)));
    keys_.push_back(is_object ? std::string() : std::string("[]"));
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  // A diverted value ended: the key it had in the model object stays unset.
  bool close_key() { return true; }

  bool vocab_id(int64_t id) {
    if (id < 0 || static_cast<uint64_t>(id) >= max_id_) {
      fail("model.vocab: \"" + key_ + "\" has id " + std::to_string(id) + ", outside [0, " +
           std::to_string(max_id_) + ")" +
           (max_id_ < kMaxVocab ? " (the entries this file's size can hold)" : ""));
    }
    auto& vocab = out_.model.vocab;
    const auto i = static_cast<size_t>(id);
    if (i >= vocab.size()) {
      vocab.resize(i + 1);
      seen_.resize(i + 1, false);
    }
    if (seen_[i]) {
      fail("model.vocab: id " + std::to_string(id) + " is both \"" + vocab[i] + "\" and \"" + key_ +
           "\"");
    }
    seen_[i] = true;
    vocab[i] = std::move(key_);
    ++vocab_entries_;
    return true;
  }
  void vocab_done() {
    index_ = std::make_unique<PieceIndex>(out_.model.vocab);
    // A piece under two ids: the index keeps one, the JSON object had a duplicate key.
    for (size_t id = 0; id < out_.model.vocab.size(); ++id) {
      if (seen_[id] && index_->find(out_.model.vocab[id]) != static_cast<int32_t>(id)) {
        fail("model.vocab: \"" + out_.model.vocab[id] + "\" appears twice");
      }
    }
  }

  bool merge_line(const std::string& line) {
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      fail("model.merges entry " + std::to_string(merge_count_) + " (\"" + line +
           "\") is not two tokens separated by one space");
    }
    add_merge(line.substr(0, space), line.substr(space + 1));
    return true;
  }
  void add_merge(std::string_view a, std::string_view b) {
    if (!index_) {  // merges before vocab in the file: resolve at the end
      pending_.emplace_back(std::string(a), std::string(b));
      ++merge_count_;
      return;
    }
    const int32_t ia = index_->find(a), ib = index_->find(b);
    if (ia < 0 || ib < 0) {
      fail("model.merges entry " + std::to_string(merge_count_) + " names \"" +
           std::string(ia < 0 ? a : b) + "\", which is not in model.vocab");
    }
    out_.model.merges.emplace_back(ia, ib);
    ++merge_count_;
  }
  void resolve_pending_merges() {
    if (pending_.empty()) return;
    if (!index_) fail("model.merges given without model.vocab");
    auto pending = std::move(pending_);
    merge_count_ = 0;
    for (const auto& [a, b] : pending) {
      add_merge(a, b);
    }
  }

  const std::string& source_;
  const uint64_t max_id_;
  TokenizerJson out_;
  bool root_set_ = false;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;  // per open container: its current key ("[]" for arrays)
  Mode mode_ = Mode::dom;
  std::string key_;  // vocab: the piece whose id comes next
  std::vector<bool> seen_;
  size_t vocab_entries_ = 0;
  std::unique_ptr<PieceIndex> index_;
  std::vector<std::string> pair_;
  size_t merge_count_ = 0;
  size_t component_values_ = 0;  // values read inside the four components
  std::vector<std::pair<std::string, std::string>> pending_;
};

}  // namespace

TokenizerJson read_tokenizer_json(std::string_view text, const std::string& source) {
  Reader reader(source, text.size());
  const bool ok = json::sax_parse(text.begin(), text.end(), &reader);
  if (!ok) throw Error(source + ": malformed JSON");
  TokenizerJson out = reader.finish();
  if (!out.rest.is_object()) throw Error(source + ": is not a JSON object");
  return out;
}

}  // namespace llama::hf
