// parse_safetensors_header: one state per place in the format's structure;
// every SAX event that does not fit the state is refused with where it was.
#include "header_parser.hpp"

#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "llama/error.hpp"

namespace llama {
namespace {

using nlohmann::json;

class HeaderSax {
 public:
  HeaderSax(size_t max_rank, size_t max_entries) : max_rank_(max_rank), max_entries_(max_entries) {}

  bool start_object(std::size_t) {
    switch (state_) {
      case State::top:
        state_ = State::top_key;
        return true;
      case State::entry:
        state_ = State::entry_key;
        return true;
      case State::metadata:
        state_ = State::metadata_key;
        return true;
      default:
        return unexpected("an object");
    }
  }
  bool key(json::string_t& k) {
    switch (state_) {
      case State::top_key:
        if (!names_.insert(k).second) {
          return fail(k == "__metadata__" ? "\"__metadata__\" appears twice"
                                          : "duplicate tensor \"" + k + "\"");
        }
        if (k == "__metadata__") {
          state_ = State::metadata;
          return true;
        }
        if (header_.tensors.size() == max_entries_) {
          return fail("more than " + std::to_string(max_entries_) + " tensors");
        }
        header_.tensors.push_back({k, {}, {}, 0, 0});
        seen_ = 0;
        state_ = State::entry;
        return true;
      case State::entry_key:
        return entry_key(k);
      case State::metadata_key:
        if (!metadata_keys_.insert(k).second) {
          return fail("duplicate key \"" + k + "\" in \"__metadata__\"");
        }
        if (header_.metadata.size() == max_entries_) {
          return fail("more than " + std::to_string(max_entries_) + " \"__metadata__\" entries");
        }
        header_.metadata.emplace_back(k, std::string());
        state_ = State::metadata_value;
        return true;
      default:
        return fail("unexpected key \"" + k + "\"");
    }
  }
  bool end_object() {
    switch (state_) {
      case State::top_key:
        state_ = State::done;
        return true;
      case State::metadata_key:
        state_ = State::top_key;
        return true;
      case State::entry_key:
        for (const auto& [bit, field] : {std::pair{kDtype, "dtype"}, std::pair{kShape, "shape"},
                                         std::pair{kOffsets, "data_offsets"}}) {
          if ((seen_ & bit) == 0) return fail(tensor() + "has no \"" + field + "\"");
        }
        state_ = State::top_key;
        return true;
      default:
        return unexpected("the end of an object");
    }
  }
  bool start_array(std::size_t) {
    switch (state_) {
      case State::shape:
        state_ = State::shape_item;
        return true;
      case State::offsets:
        state_ = State::offsets_item;
        return true;
      default:
        return unexpected("an array");
    }
  }
  bool end_array() {
    switch (state_) {
      case State::shape_item:
        state_ = State::entry_key;
        return true;
      case State::offsets_item:
        if (offsets_ != 2) return fail(tensor() + "\"data_offsets\" must hold two numbers");
        state_ = State::entry_key;
        return true;
      default:
        return unexpected("the end of an array");
    }
  }
  bool string(json::string_t& s) {
    switch (state_) {
      case State::dtype:
        header_.tensors.back().dtype = std::move(s);
        state_ = State::entry_key;
        return true;
      case State::metadata_value:
        header_.metadata.back().second = std::move(s);
        state_ = State::metadata_key;
        return true;
      default:
        return unexpected("a string");
    }
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (state_ != State::shape_item && state_ != State::offsets_item) {
      return unexpected("a number");
    }
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return fail(tensor() + "the number " + std::to_string(v) + " does not fit in 64 bits");
    }
    const auto n = static_cast<int64_t>(v);
    HeaderEntry& t = header_.tensors.back();
    if (state_ == State::shape_item) {
      if (t.shape.size() >= max_rank_) {
        return fail(tensor() + "more than " + std::to_string(max_rank_) + " dimensions");
      }
      t.shape.push_back(n);
      return true;
    }
    if (offsets_ >= 2) return fail(tensor() + "\"data_offsets\" must hold two numbers");
    (offsets_++ == 0 ? t.begin : t.end) = n;
    return true;
  }
  bool number_integer(json::number_integer_t v) {
    if (v >= 0) return number_unsigned(static_cast<json::number_unsigned_t>(v));
    if (state_ == State::shape_item || state_ == State::offsets_item) {
      return fail(tensor() + "negative number " + std::to_string(v) + " in \"" +
                  (state_ == State::shape_item ? "shape" : "data_offsets") + "\"");
    }
    return unexpected("a number");
  }
  bool number_float(json::number_float_t, const json::string_t& text) {
    if (state_ == State::shape_item || state_ == State::offsets_item) {
      return fail(tensor() + "\"" + text + "\" is not an integer");
    }
    return unexpected("a number");
  }
  bool null() { return unexpected("null"); }
  bool boolean(bool) { return unexpected("a boolean"); }
  bool binary(json::binary_t&) { return unexpected("binary data"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    std::string what = ex.what();
    const size_t cut = what.find("] ");
    if (cut != std::string::npos) what.erase(0, cut + 2);
    return fail("invalid JSON: " + what);
  }

  ParsedHeader& header() { return header_; }
  const std::string& error() const { return error_; }

 private:
  enum class State {
    top,
    top_key,
    entry,
    entry_key,
    dtype,
    shape,
    shape_item,
    offsets,
    offsets_item,
    metadata,
    metadata_key,
    metadata_value,
    done
  };
  static constexpr unsigned kDtype = 1, kShape = 2, kOffsets = 4;

  bool entry_key(const std::string& k) {
    const unsigned bit = k == "dtype"          ? kDtype
                         : k == "shape"        ? kShape
                         : k == "data_offsets" ? kOffsets
                                               : 0;
    if (bit == 0) return fail(tensor() + "unexpected key \"" + k + "\"");
    if ((seen_ & bit) != 0) return fail(tensor() + "duplicate key \"" + k + "\"");
    seen_ |= bit;
    state_ = bit == kDtype ? State::dtype : bit == kShape ? State::shape : State::offsets;
    offsets_ = 0;
    return true;
  }
  std::string tensor() const { return "tensor \"" + header_.tensors.back().name + "\": "; }
  bool unexpected(const char* what) {
    switch (state_) {
      case State::top:
        return fail(std::string("the header must be a JSON object, not ") + what);
      case State::entry:
        return fail(tensor() + "must be an object, not " + what);
      case State::dtype:
        return fail(tensor() + "\"dtype\" must be a string, not " + what);
      case State::shape:
      case State::shape_item:
        return fail(tensor() + "\"shape\" must be an array of non-negative integers, not " + what);
      case State::offsets:
      case State::offsets_item:
        return fail(tensor() + "\"data_offsets\" must be two non-negative integers, not " + what);
      case State::metadata:
        return fail(std::string("\"__metadata__\" must be an object, not ") + what);
      case State::metadata_value:
        return fail("\"__metadata__\" value of \"" + header_.metadata.back().first +
                    "\" must be a string, not " + what);
      default:
        return fail(std::string("unexpected ") + what);
    }
  }
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  size_t max_rank_;
  size_t max_entries_;
  State state_ = State::top;
  ParsedHeader header_;
  std::unordered_set<std::string> names_, metadata_keys_;
  unsigned seen_ = 0;
  int offsets_ = 0;
  std::string error_;
};

}  // namespace

ParsedHeader parse_safetensors_header(std::string_view text, const std::string& source,
                                      size_t max_rank, size_t max_entries) {
  HeaderSax sax(max_rank, max_entries);
  const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) throw Error(source + ": header: " + sax.error());
  return std::move(sax.header());
}

}  // namespace llama
