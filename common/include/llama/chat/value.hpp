// The values a chat template computes with: Jinja's undefined, none, booleans,
// integers, floats, strings, lists, dicts, namespace objects and callables.
// Strings, lists and dicts are immutable and shared (copying a Value never
// copies its contents, however large); a namespace is the one mutable object (`{% set ns.found =
// true %}` inside a loop changes the namespace the loop's enclosing scope sees).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llama::chat {

class Value;
using Array = std::vector<Value>;
// Insertion-ordered, as Python dicts and JSON objects as read.
using Object = std::vector<std::pair<std::string, Value>>;

// A built-in function (`range`, `namespace`, `raise_exception`) or a bound
// method (`message.content.strip`), called by name.
struct Callable;

class Value {
 public:
  enum class Kind {
    undefined,
    none,
    boolean,
    integer,
    floating,
    string,
    array,
    object,
    ns,
    callable
  };

  Value() = default;  // undefined
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double d);
  static Value string(std::string s);
  static Value array(Array items);
  static Value object(Object entries);
  static Value make_namespace(Object entries);
  static Value callable(std::string name);                       // a global function
  static Value callable(std::string name, Value self);           // a bound method
  static Value macro(std::string name, const void* definition);  // a template's macro

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_number() const { return kind_ == Kind::integer || kind_ == Kind::floating; }
  // Dicts and namespaces: both hold named attributes.
  bool is_mapping() const { return kind_ == Kind::object || kind_ == Kind::ns; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::integer ? static_cast<double>(i_) : d_; }
  const std::string& as_string() const;
  const Array& as_array() const;      // lists only
  const Object& as_object() const;    // dicts and namespaces
  Object& namespace_entries() const;  // namespaces only: mutable attributes
  const Callable& as_callable() const;

  // Nesting depth: 0 for scalars, 1 + the deepest element for lists and dicts
  // (a namespace counts as 1). Bounded by kMaxDepth at construction, so
  // printing, comparing and freeing never recurse without bound.
  int depth() const { return depth_; }
  static constexpr int kMaxDepth = 256;
  // This value is or holds a namespace (which a namespace may not hold: no cycles).
  bool holds_namespace() const { return holds_ns_; }

  // The work of walking the whole value (printing, comparing, tojson), shared
  // parts counted each time they occur: 1 per scalar, list element and dict
  // entry, plus 1 per 64 bytes of strings and keys; saturates at kMaxWeight.
  // Known in O(1), so a walk is charged to the render's budget before it starts.
  uint64_t weight() const;
  static constexpr uint64_t kMaxWeight = uint64_t{1} << 62;

  // A dict's or namespace's entry, or nullptr.
  const Value* find(std::string_view key) const;

  // Python truthiness: undefined, none, false, 0, 0.0, "", [], {} are false.
  bool truthy() const;

  // Kind names as error messages print them ("string", "list", ...).
  static const char* kind_name(Kind k);
  const char* kind_name() const { return kind_name(kind_); }

 private:
  Kind kind_ = Kind::undefined;
  bool b_ = false;
  bool holds_ns_ = false;
  int depth_ = 0;
  int64_t i_ = 0;
  double d_ = 0;
  uint64_t weight_ = 1;
  std::shared_ptr<const std::string> s_;  // null for the empty string
  std::shared_ptr<const Array> array_;
  std::shared_ptr<Object> object_;  // dicts (never changed) and namespaces
  std::shared_ptr<const Callable> callable_;
};

struct Callable {
  std::string name;
  Value self;                   // a bound method's receiver; undefined for a global function
  const void* macro = nullptr;  // a template's {% macro %} (the interpreter's statement)
};

// Structural equality as Python's == (1 == 1.0, lists and dicts element-wise;
// undefined equals only undefined). Takes up to min(a.weight(), b.weight())
// steps, times a dict's entry count for the key lookups of a dict.
bool equal(const Value& a, const Value& b);

// The text `{{ v }}` prints (@huggingface/jinja's rules, the reference
// renderer's): undefined and none print nothing, booleans "true"/"false",
// integer-valued floats "2.0", lists and dicts as JSON. Throws llama::Error
// rather than make a text longer than max_bytes.
std::string to_output(const Value& v, size_t max_bytes = SIZE_MAX);

// JSON text (the tojson filter): ", " and ": " separators, or with indent > 0
// one item per line; strings escaped as JSON requires, UTF-8 kept. Throws
// llama::Error rather than make a text longer than max_bytes.
std::string to_json(const Value& v, int indent = 0, size_t max_bytes = SIZE_MAX);

}  // namespace llama::chat
