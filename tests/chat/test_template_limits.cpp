// Hostile templates (issue 39): chains that build deep trees, integer
// arithmetic at the edges of 64 bits, renders that would take minutes or
// gigabytes, oversized sources, and tokenizer_config.json values of the wrong
// type. Each is one error naming the limit; the budgets still fit a render of
// a conversation as long as a large context holds.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "gguf_tiny.hpp"
#include "llama/chat/chat_format.hpp"
#include "llama/chat/json_value.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/chat/template.hpp"
#include "test_support.hpp"

namespace chat = llama::chat;
using chat::ChatTemplate;
using chat::TemplateError;

namespace {

std::string render(const std::string& source, const std::string& variables = "{}") {
  return ChatTemplate::parse(source).render(chat::variables_from_json(variables, "variables"));
}

// The error parsing and rendering give, or "" when the template renders.
std::string error_of(const std::string& source, const std::string& variables = "{}") {
  try {
    (void)render(source, variables);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "";
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string file(const std::string& name, const std::string& text) {
  const std::string path = llama::test::temp_path(name);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  llama::test::write_file(path, std::vector<std::byte>(p, p + text.size()));
  return path;
}

constexpr const char* kTooDeep =
    "line 1: an expression nested more than 256 levels deep (a chain of filters, operators, "
    "attributes, subscripts or calls?)";

}  // namespace

TEST_CASE("template limits: a chain of any syntax stops at the expression height limit",
          "[chat][limits]") {
  // Chains of 40,000 links (as long as the source limit allows), refused
  // while parsing: before, evaluating or destroying the tree overflowed the stack.
  for (const std::string link :
       {"|lower", ".a", " + 1", " ~ 1", " and 1", " or 1", "[0]", "()", " * 1", " == 1"}) {
    INFO(link);
    CHECK(error_of("{{ x" + repeat(link, 40000) + " }}") == kTooDeep);
    CHECK_NOTHROW(ChatTemplate::parse("{{ x" + repeat(link, 200) + " }}"));
  }
  CHECK(render("{{ 'A'" + repeat("|lower", 255) + " }}") == "a");
  CHECK(error_of("{{ 'A'" + repeat("|lower", 256) + " }}") == kTooDeep);
  CHECK(render("{{ 1" + repeat(" + 1", 200) + " }}") == "201");
  // Heights add up through parentheses, arguments and statements.
  CHECK(error_of("{{ (x" + repeat(".a", 200) + ")" + repeat(".a", 200) + " }}") == kTooDeep);
  CHECK(error_of("{{ f(x" + repeat("[0]", 200) + ")" + repeat("()", 100) + " }}") == kTooDeep);
  CHECK(error_of("{% if x" + repeat(" and x", 40000) + " %}{% endif %}") == kTooDeep);
  CHECK(error_of("{% for i in x" + repeat("|list", 40000) + " %}{% endfor %}") == kTooDeep);
  // Through a GGUF file's tokenizer.chat_template and llama-cli -m chat (the
  // issue's 100,000 filters made it exit 139): the size limit, then the depth limit.
  const auto chat_with = [](const std::string& name, const std::string& source) {
    llama::test::TinyLlama spec;
    spec.edit = [&](llama::gguf::Writer& w) { w.set_string("tokenizer.chat_template", source); };
    const std::string gguf = llama::test::temp_path(name);
    llama::test::write_file(gguf, llama::test::tiny_llama_gguf(spec));
    std::istringstream in("Hi\n");
    std::ostringstream out, err;
    const int code =
        llama::cli::run_cli({"-c", gguf, "-m", "chat", "-p", "Hi", "-s", "4"}, in, out, err);
    CHECK(code == 1);
    return std::pair{gguf, err.str()};
  };
  auto [gguf, err] = chat_with("chain-100000.gguf", "{{ x" + repeat("|lower", 100000) + " }}");
  CHECK(err == "llama-cli: " + gguf +
                   ": tokenizer.chat_template: the template is 600007 bytes, more than the "
                   "262144 a chat template may have\n");
  std::tie(gguf, err) = chat_with("chain-40000.gguf", "{{ x" + repeat("|lower", 40000) + " }}");
  CHECK(err ==
        "llama-cli: " + gguf + ": tokenizer.chat_template: chat template " + kTooDeep + "\n");
}

TEST_CASE("template limits: integer arithmetic is checked at the edges of 64 bits",
          "[chat][limits]") {
  // Slices with steps and bounds near 2^63 (the issue's: signed overflow in i += step).
  CHECK(render("{{ [1, 2, 3][1::9223372036854775807] }}") == "[2]");
  CHECK(render("{{ 'abc'[1::9223372036854775807] }}") == "b");
  CHECK(render("{{ [1, 2, 3][::-9223372036854775807 - 1] }}") == "[3]");
  CHECK(render("{{ 'abc'[-9223372036854775807 - 1:9223372036854775807] }}") == "abc");
  CHECK(render("{{ [1, 2, 3][9223372036854775807:-9223372036854775807 - 1:-2] }}") == "[3, 1]");
  CHECK(render("{{ 'héllo'[::-2] }}|{{ 'héllo'[1:4] }}|{{ 'héllo'[-4] }}") == "olh|éll|é");
  CHECK(render("{{ [1, 2, 3][::9223372036854775807] }}{{ 'x'[5:] }}") == "[1]");
  // range() near the ends of int64: no overflow computing the count or the values.
  CHECK(render("{{ range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904) | "
               "list }}") ==
        "[-9223372036854775808, -4611686018427387904, 0, 4611686018427387904]");
  CHECK(render("{{ range(9223372036854775807, -9223372036854775807 - 1, -9223372036854775807 - "
               "1) | list }}") == "[9223372036854775807, -1]");
  // Arithmetic that does not fit is an error, not a wrapped value.
  CHECK(error_of("{{ -(-9223372036854775807 - 1) }}") == "line 1: integer overflow in '-'");
  CHECK(error_of("{{ (-9223372036854775807 - 1) // -1 }}") == "line 1: integer overflow in '//'");
  CHECK(render("{{ (-9223372036854775807 - 1) % -1 }}") == "0");
  CHECK(error_of("{{ 9223372036854775807 * 2 }}") == "line 1: integer overflow in '*'");
  CHECK(error_of("{{ -9223372036854775807 - 2 }}") == "line 1: integer overflow in '-'");
  CHECK(error_of("{{ (-9223372036854775807 - 1) | abs }}") == "line 1: integer overflow in abs");
  CHECK(error_of("{{ 3 ** 40 }}") == "line 1: integer overflow in '**'");
  CHECK(render("{{ 'abc'[-9223372036854775807 - 1] }}{{ [1][9223372036854775807] }}").empty());
}

TEST_CASE("template limits: renders that would take minutes or gigabytes stop at a budget",
          "[chat][limits]") {
  const std::string memory = "the template's values would take more than 67108864 bytes";
  const std::string work = "the template did more than 5000000 steps of work";
  // The issue's four: a list doubled 40 times, range(16000000) twice, tojson of a
  // million-element list in a loop, `x in big_list` 500,000 times.
  CHECK_THAT(error_of("{% set l = [1] %}{% for i in range(40) %}{% set l = l + l %}{% endfor %}"),
             Catch::Contains(memory));
  CHECK(error_of("{% set a = range(16000000) %}{% set b = range(16000000) %}") ==
        "line 1: " + memory + " (making a list of 16000000 items)");
  CHECK(error_of("{% set l = range(1000000) | list %}") ==
        "line 1: " + memory + " (making a list of 1000000 items)");
  // More items than bytes exist: the size saturates instead of wrapping past the check.
  CHECK(error_of("{{ range(4611686018427387904) | length }}") ==
        "line 1: " + memory + " (making a list of 4611686018427387904 items)");
  std::string million = "{\"l\": [0";  // as a client's variables could hold it
  for (int i = 1; i < 1000000; ++i) million += ", 0";
  million += "]}";
  CHECK_THAT(error_of("{% for i in range(1000) %}{{ (l | tojson) | length }}{% endfor %}", million),
             Catch::Contains(work));
  CHECK_THAT(error_of("{% set l = range(100000) %}{% for i in range(500000) %}"
                      "{% if -1 in l %}x{% endif %}{% endfor %}"),
             Catch::Contains(work));
  // Walking a value is charged by what it holds, shared parts each time.
  CHECK_THAT(error_of("{% set l = range(1000) %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}"
                      "{% set n = [m, m, m, m, m, m, m, m, m, m] %}{% set o = [n, n, n, n, n, n, "
                      "n, n, n, n] %}{{ [o, o, o, o, o, o, o, o, o, o] | tojson | length }}"),
             Catch::Contains(work));
  const std::string tower =  // [[[[range(1000)] x 10] x 10] x 10] x 10: 10^7 numbers
      "{% set m = [l, l, l, l, l, l, l, l, l, l] %}{% set n = [m, m, m, m, m, m, m, m, m, m] %}"
      "{% set o = [n, n, n, n, n, n, n, n, n, n] %}{% set p = [o, o, o, o, o, o, o, o, o, o] %}";
  CHECK(render("{% set l = range(1000) %}" + tower + "{{ p == p }}") == "true");  // one list
  CHECK_THAT(error_of("{% set l = range(1000) %}" + tower + "{% set q = p %}" +
                      "{% set l = range(1000) %}" + tower + "{{ p == q }}"),
             Catch::Contains(work));
  // A string's characters as a list cost ~100 bytes each: checked before they are made.
  const std::string doubled =  // ns.s: 'ab' doubled 21 times, 4 MiB
      "{% set ns = namespace(s='ab') %}{% for i in range(21) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}";
  CHECK_THAT(error_of(doubled + "{{ ns.s | list | length }}"),
             Catch::Contains(memory + " (making a list of 4194304 items)"));
  CHECK_THAT(error_of(doubled + "{{ ns.s.replace('b', ' ').split() | length }}"),
             Catch::Contains(memory + " (making a list of 2097152 items)"));
  // Many names in one scope, or a dict with many keys, cost a scan per lookup.
  const std::string big_dict = "{\"d\": {" + [] {
    std::string keys;
    for (int i = 0; i < 200000; ++i) keys += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
    return keys;
  }() + "}}";
  CHECK_THAT(error_of("{% for i in range(100000) %}{{ d.nothere }}{% endfor %}", big_dict),
             Catch::Contains(work));
}

TEST_CASE("template limits: a conversation as long as a large context renders within them",
          "[chat][limits]") {
  // 2,000 messages of 1 KB (~0.5M tokens) through the reference set's templates
  // (system messages split off, alternation checks, strip, concatenation).
  const auto conversation = [](int n) {
    std::string json = "[";
    for (int i = 0; i < n; ++i) {
      if (i > 0) json += ", ";
      json += std::string("{\"role\": \"") + (i % 2 == 0 ? "user" : "assistant") +
              "\", \"content\": \"" + std::string(1000, static_cast<char>('a' + i % 26)) + "\"}";
    }
    return "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"messages\": " + json + "]}";
  };
  const std::string messages = conversation(2000);
  const nlohmann::json ref =
      llama::test::load_json(llama::test::reference_path("chat-templates.json"));
  size_t rendered = 0;
  for (const auto& t : ref.at("templates")) {
    INFO(t.at("name").get<std::string>());
    try {
      const std::string out = render(t.at("template").get<std::string>(), messages);
      CHECK(out.size() > 2000 * 1000);
      ++rendered;
    } catch (const TemplateError& e) {
      INFO(e.what());
      CHECK(e.raised());  // the template's own refusal (a role it does not take), no limit
    }
  }
  CHECK(rendered >= 6);
  // A template that accumulates the whole prompt in a namespace copies it
  // once per message: 250 messages, ~30 MB of strings built.
  const std::string accumulate =
      "{% set ns = namespace(p='') %}{% for m in messages %}{% set ns.p = ns.p + '<|' + m.role + "
      "'|>' + m.content %}{% endfor %}{{ ns.p | length }}";
  CHECK(render(accumulate, conversation(250)) == std::to_string(125 * 1008 + 125 * 1013));
}

TEST_CASE("template limits: the template source has a size limit", "[chat][limits]") {
  const std::string at_limit(chat::kMaxTemplateBytes, 'x');  // text: one token
  CHECK(ChatTemplate::parse(at_limit).render({}).size() == chat::kMaxTemplateBytes);
  try {
    (void)ChatTemplate::parse(at_limit + "x");
    FAIL("no error");
  } catch (const TemplateError& e) {
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()) ==
          "the template is 262145 bytes, more than the 262144 a chat template may have");
  }
  chat::ModelChatTemplate t;
  t.source = std::string(10 << 20, 'x');  // the issue's: 10 MB took 860 MB and 5 s
  t.origin = "model.gguf: tokenizer.chat_template";
  CHECK_THROWS_WITH(chat::TemplateChatFormat(t),
                    "model.gguf: tokenizer.chat_template: the template is 10485760 bytes, more "
                    "than the 262144 a chat template may have");
}

TEST_CASE("template limits: template variables from JSON are bounded", "[chat][limits]") {
  // 2 bytes of JSON ("0,") are ~90 bytes of values: a 4 MB list would take 180 MB.
  std::string zeros = "[0";
  for (int i = 1; i < 2'000'000; ++i) zeros += ",0";
  zeros += "]";
  CHECK_THROWS_WITH(chat::value_from_json(zeros, "m.json"),
                    "m.json: the JSON's values would take more than 134217728 bytes");
  CHECK(chat::value_from_json(zeros.substr(0, 200'000) + "]", "m.json").as_array().size() ==
        100'000);
  // An object of 200,000 keys parses in linear time; a repeated key keeps the last value.
  std::string keys = "{";
  for (int i = 0; i < 200'000; ++i) keys += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
  CHECK(chat::value_from_json(keys + ", \"k7\": 2}", "m.json").as_object().size() == 200'000);
  CHECK(render("{{ d.k1 }}{{ d.k2 }}", R"({"d": {"k1": 1, "k2": 2, "k1": 3}})") == "32");
  CHECK_THROWS_WITH(chat::value_from_json(std::string(300, '[') + std::string(300, ']'), "m.json"),
                    "m.json: JSON nested deeper than 256 levels");
}

TEST_CASE("template limits: tokenizer_config.json values of the wrong type name the key",
          "[chat][limits]") {
  const auto error = [](const std::string& json) {
    try {
      (void)chat::parse_tokenizer_config(json, "cfg.json");
    } catch (const llama::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // The issue's: a leaked json.exception.type_error.302.
  CHECK(error(R"({"chat_template": [{"name": 5, "template": "T"}]})") ==
        "cfg.json: chat_template[0].name is a number, expected a string");
  CHECK(error(R"({"chat_template": [{"name": "default", "template": "D"}, {"name": "x"}]})") ==
        "cfg.json: chat_template[1] has no \"template\"");
  CHECK(error(R"({"chat_template": [{"name": "default", "template": ["D"]}]})") ==
        "cfg.json: chat_template[0].template is an array, expected a string");
  CHECK(error(R"({"chat_template": ["default"]})") ==
        "cfg.json: chat_template[0] is a string, expected an object with \"name\" and "
        "\"template\"");
  CHECK(error(R"({"chat_template": [{"template": "T"}]})") ==
        "cfg.json: chat_template[0] has no \"name\"");
  CHECK(error(R"({"bos_token": {"content": 1}})") ==
        "cfg.json: bos_token.content is a number, expected a string");
  CHECK(error(R"({"eos_token": 7})") ==
        "cfg.json: eos_token is neither a string nor a token with \"content\"");
  CHECK(error(R"({"chat_template": "T", "chat_template": "U"})")
            .starts_with("cfg.json: invalid JSON: duplicate key \"chat_template\""));
  CHECK(error("[1]") == "cfg.json: not a JSON object");
  // Read as a bounded regular file.
  const std::string dir = llama::test::temp_path("a-directory.json");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(chat::read_tokenizer_config(dir), dir + ": not a regular file (a directory)");
  const std::string ok = file("ok-config.json", R"({"chat_template": "T", "eos_token": "E"})");
  CHECK(chat::read_tokenizer_config(ok).eos_token == "E");
}
