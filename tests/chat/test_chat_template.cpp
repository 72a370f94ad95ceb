// The chat-template engine: the reference renders of real templates byte for
// byte, a table of constructs against @huggingface/jinja, where the engine
// follows Python's Jinja instead, and every way a template can fail: one
// error naming the line, never a hang or unbounded memory.
#include <catch2/catch.hpp>
#include <string>

#include "llama/chat/json_value.hpp"
#include "llama/chat/model_template.hpp"
#include "llama/chat/template.hpp"
#include "test_support.hpp"

namespace chat = llama::chat;
using chat::ChatTemplate;
using chat::TemplateError;
using chat::Value;

namespace {

struct HfCase {
  const char* source;
  const char* variables;
  const char* expected;
  bool refuses;
};

const HfCase kHfCases[] = {
#include "hf_jinja_cases.inc"
};

std::string render(const std::string& source, const std::string& variables = "{}",
                   const chat::RenderLimits& limits = {}) {
  return ChatTemplate::parse(source).render(chat::variables_from_json(variables, "variables"),
                                            limits);
}

// The error a template gives, or "" when it renders.
std::string error_of(const std::string& source, const std::string& variables = "{}",
                     const chat::RenderLimits& limits = {}) {
  try {
    (void)render(source, variables, limits);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("chat templates: every reference render byte for byte", "[chat]") {
  const nlohmann::json ref =
      llama::test::load_json(llama::test::reference_path("chat-templates.json"));
  size_t renders = 0, errors = 0;
  for (const auto& t : ref.at("templates")) {
    INFO(t.at("name").get<std::string>());
    const ChatTemplate tpl = ChatTemplate::parse(t.at("template").get<std::string>());
    for (const auto& r : t.at("renders")) {
      const std::string conversation = r.at("conversation").get<std::string>();
      INFO(conversation << " add_generation_prompt=" << r.at("add_generation_prompt"));
      chat::Object vars =
          chat::variables_from_json(ref.at("conversations").at(conversation).dump(), "messages");
      vars.emplace_back("bos_token", Value::string(t.at("bos_token").get<std::string>()));
      vars.emplace_back("eos_token", Value::string(t.at("eos_token").get<std::string>()));
      vars.emplace_back("add_generation_prompt",
                        Value::boolean(r.at("add_generation_prompt").get<bool>()));
      if (r.contains("text")) {
        CHECK(tpl.render(vars) == r.at("text").get<std::string>());
        ++renders;
      } else {
        try {
          (void)tpl.render(vars);
          FAIL("rendered, but the reference raises " << r.at("error"));
        } catch (const TemplateError& e) {
          CHECK(e.raised());
          CHECK(e.message() == r.at("error").get<std::string>());
        }
        ++errors;
      }
    }
  }
  CHECK(ref.at("templates").size() == 8);
  CHECK(renders + errors == 48);
  CHECK(errors == 4);
}

TEST_CASE("chat templates: constructs render as @huggingface/jinja renders them", "[chat]") {
  for (const HfCase& c : kHfCases) {
    INFO("template: " << c.source << "\nvariables: " << c.variables);
    if (c.refuses) {
      CHECK_THROWS_AS(render(c.source, c.variables), TemplateError);
    } else {
      CHECK(render(c.source, c.variables) == c.expected);
    }
  }
}

TEST_CASE("chat templates: Python's Jinja where @huggingface/jinja refuses or is lax", "[chat]") {
  CHECK(render("{{ 'abc' | list }}") == R"(["a", "b", "c"])");
  CHECK(render("{{ (1, 2) }}|{{ () }}") == "[1, 2]|[]");
  CHECK(render("{{ -5 % 3 }} {{ 5 % -3 }} {{ -7 // 2 }}") == "1 -1 -4");  // floor semantics
  CHECK(error_of("{{ 1 / 0 }}") == "line 1: division by zero");
  CHECK(error_of("{{ 1 // 0 }}") == "line 1: integer division or modulo by zero");
  CHECK(render("{% for c in 'hé' %}[{{ c }}]{% endfor %}") == "[h][é]");
  CHECK(render("{% for x in missing %}x{% else %}none{% endfor %}") == "none");
  CHECK(render("{{ ', '.join(['a', 'b']) }}") == "a, b");
  CHECK(render("{{ 'x' ~ none }}") == "xNone");
  CHECK(render("{{ 'a-b-c'.split('-', 1) }}") == R"(["a", "b-c"])");
  CHECK(render("{{ 'xxhixx'.strip('x') }}|{{ s | trim('x') }}", R"({"s": "xhix"})") == "hi|hi");
  CHECK(render("{{ 'héllo' | length }} {{ 'héllo'[1] }} {{ 'héllo'[1:3] }}") == "5 é él");
  CHECK(render("{{ '\\u00e9\\x41' }}") == "éA");
}

TEST_CASE("chat templates: macros (tool-use templates define them)", "[chat]") {
  // Expected texts rendered by @huggingface/jinja 0.5.11.
  CHECK(render("{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}"
               "{{ greet('Ann') }} {{ greet('Bob', '?') }} {{ greet(name='Cy', punct='.') }} "
               "{{ greet() }}") == "Hello Ann! Hello Bob? Hello Cy. Hello !");
  CHECK(
      render(
          "{% macro render(m) -%}\n  [{{ m.role }}] {{ m.content | trim }}\n{%- endmacro %}"
          "{% for m in messages %}{{ render(m) }};{% endfor %}",
          R"({"messages": [{"role": "user", "content": " a "}, {"role": "assistant", "content": "b"}]})") ==
      "[user] a;[assistant] b;");
  CHECK(
      render("{% macro outer(x) %}<{{ inner(x * 2) }}>{% endmacro %}{% macro inner(y) %}{{ y + 1 }}"
             "{% endmacro %}{{ outer(3) }}") == "<7>");
  CHECK(render("{% macro m(a) %}{% set a = a ~ '!' %}{{ a }}{% endmacro %}{% set a = 'outer' %}"
               "{{ m('in') }} {{ a }}") == "in! outer");
  CHECK(render("{{ 'line1\nline2\n\nline4' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}|"
               "{{ 'a\n\nb' | indent(width=3, blank=true) }}") ==
        "line1\n  line2\n\n  line4|  a\n  b|a\n   \n   b");
  // Errors: arguments, recursion bounded, definitions checked when parsed.
  CHECK(error_of("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}") ==
        "line 1: macro 'm' takes 1 arguments, got 2");
  CHECK(error_of("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}") ==
        "line 1: macro 'm' has no parameter 'b'");
  CHECK(error_of("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}")
            .find("macros nested more than 64") != std::string::npos);
  // Deep statements inside a recursive macro: bounded across the calls, not only per call.
  std::string deep = "{% macro m(n) %}";
  for (int i = 0; i < 60; ++i) deep += "{% if true %}";
  deep += "{{ m(n + 1) }}";
  for (int i = 0; i < 60; ++i) deep += "{% endif %}";
  CHECK(error_of(deep + "{% endmacro %}{{ m(0) }}").find("levels of evaluation") !=
        std::string::npos);
  CHECK(error_of("{% macro m(a=1, b) %}{% endmacro %}") ==
        "line 1: parameter 'b' without a default after one with a default");
  CHECK(error_of("{% macro m(a, a) %}{% endmacro %}") == "line 1: duplicate parameter 'a'");
  CHECK(error_of("{% for x in [1] %}{% macro m() %}{% break %}{% endmacro %}{% endfor %}") ==
        "line 1: 'break' outside a for loop");
}

TEST_CASE("chat templates: whitespace control and line structure", "[chat]") {
  // trim_blocks drops the newline after a block tag; lstrip_blocks the indent before one.
  CHECK(render("{% if true %}\nA\n{% endif %}\n") == "A\n");
  CHECK(render("  {% if true %}x{% endif %}") == "x");
  CHECK(render("a  {% if true %}x{% endif %}") == "a  x");  // not at the start of a line
  CHECK(render("  {{ 'x' }}") == "  x");                    // expressions keep their indent
  CHECK(render("a\n\n{%- if true -%}\n\n b{% endif %}") == "ab");
  CHECK(render("{# note #}\nx") == "x");
  CHECK(render("x\n") == "x");                 // one trailing newline of the source is dropped
  CHECK(render("x\n\n") == "x\n");             // only one
  CHECK(render("\xc2\xa0{{- 'x' }}") == "x");  // U+00A0 is whitespace to '-'
}

TEST_CASE("chat templates: constructs outside the subset are refused by name and line", "[chat]") {
  const auto parse_error = [](const std::string& source) {
    try {
      (void)ChatTemplate::parse(source);
    } catch (const TemplateError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(parse_error("a\nb\n{% filter upper %}x{% endfilter %}") ==
        "line 3: unsupported statement 'filter'");
  CHECK(parse_error("{% raw %}x{% endraw %}") == "line 1: unsupported statement 'raw'");
  CHECK(parse_error("\n{% include 'x' %}") == "line 2: unsupported statement 'include'");
  CHECK(parse_error("{% call f() %}{% endcall %}") == "line 1: unsupported statement 'call'");
  CHECK(parse_error("{% frobnicate %}") == "line 1: unknown statement 'frobnicate'");
  CHECK(parse_error("{% for x in xs recursive %}{% endfor %}") ==
        "line 1: unsupported construct 'recursive' loop");
  // Syntax errors point at the line of the offending token.
  CHECK(parse_error("ok\n{{ 1 + }}") == "line 2: unexpected '}}' in an expression");
  CHECK(parse_error("{{ x") == "line 1: unterminated expression '{{'");
  CHECK(parse_error("\n\n{% if x %}never closed") == "line 3: 'if' has no {% endif %}");
  CHECK(parse_error("{% for x in y %}\n{% endif %}") ==
        "line 2: 'endif' without a matching opening statement");
  CHECK(parse_error("{{ 'abc }}") == "line 1: unterminated string literal");
  CHECK(parse_error("{# never closed") == "line 1: unterminated comment '{#'");
  CHECK(parse_error("{{ a ? b }}") == "line 1: unexpected character '?'");
  CHECK(parse_error("{{ x }\n}") == "line 1: unexpected '}'");
  CHECK(parse_error("{% break %}") == "line 1: 'break' outside a for loop");
  CHECK(parse_error("{{ 99999999999999999999 }}") ==
        "line 1: integer literal out of range: 99999999999999999999");
  CHECK(parse_error("{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}")
            .find("nested more than") != std::string::npos);
  std::string deep_ifs;
  for (int i = 0; i < 300; ++i) deep_ifs += "{% if true %}";
  CHECK(parse_error(deep_ifs).find("nested more than") != std::string::npos);
  std::string nots = "{{ ";
  for (int i = 0; i < 300; ++i) nots += "not ";
  CHECK(parse_error(nots + "x }}").find("nested more than") != std::string::npos);
  CHECK(parse_error("{{ " + std::string(300, '-') + "1 }}").find("nested more than") !=
        std::string::npos);
}

TEST_CASE("chat templates: runtime errors name the line; raise_exception carries its message",
          "[chat]") {
  CHECK(error_of("a\n{{ raise_exception('no ' ~ 'system') }}") ==
        "line 2: the template raised: no system");
  try {
    (void)render("{{ raise_exception('bad role') }}");
    FAIL("no error");
  } catch (const TemplateError& e) {
    CHECK(e.raised());
    CHECK(e.message() == "bad role");
    CHECK(e.line() == 1);
  }
  CHECK(error_of("\n\n{{ x | nosuch }}") == "line 3: unknown filter 'nosuch'");
  CHECK(error_of("{{ nosuch(1) }}") == "line 1: unknown function 'nosuch'");
  CHECK(error_of("{{ x is nosuch }}") == "line 1: unknown test 'nosuch'");
  CHECK(error_of("{{ 'a' * 3 }}") ==
        "line 1: operator '*' does not apply to a string and a integer");
  CHECK(error_of("{{ 9223372036854775807 + 1 }}") == "line 1: integer overflow in '+'");
  CHECK(error_of("{{ 2 ** 64 }}") == "line 1: integer overflow in '**'");
  CHECK(error_of("{% set x = 1 %}{% set x.a = 2 %}") ==
        "line 1: cannot set attribute 'a' of 'x': not a namespace");
  CHECK(error_of("{% set ns = namespace() %}{% set ns.me = ns %}") ==
        "line 1: a namespace cannot hold a namespace");
  CHECK(error_of("{% set ns = namespace() %}{% set ns.me = [ns] %}") ==
        "line 1: a namespace cannot hold a namespace");
  CHECK(error_of("{% set a, b = [1] %}") == "line 1: cannot unpack list into 2 variables");
  CHECK(error_of("{% for x in 3 %}{% endfor %}") == "line 1: cannot iterate over a integer");
  CHECK(error_of("{{ range(1, 2, 0) }}") == "line 1: range() step must not be zero");
  CHECK(error_of("{{ ''.split('') }}") == "line 1: split(): empty separator");
  CHECK(error_of("{{ x[1:2:0] }}", R"({"x": [1]})") == "line 1: slice step cannot be zero");
}

TEST_CASE("chat templates: runaway templates stop at the limits", "[chat]") {
  // Work: nested loops that would run 10^10 iterations.
  CHECK(error_of("{% set r = range(100000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor "
                 "%}")
            .find("steps of work") != std::string::npos);
  // Output.
  chat::RenderLimits small;
  small.max_output_bytes = 1000;
  CHECK(error_of("{% for i in range(900) %}ab{% endfor %}", "{}", small) ==
        "line 1: the output grew past the limit of 1000");
  CHECK(render("{% for i in range(400) %}ab{% endfor %}", "{}", small).size() == 800);
  // A string doubling itself, a list doubling itself, a range too long to build.
  CHECK(error_of("{% set s = 'ab' %}{% for i in range(64) %}{% set s = s ~ s %}{% endfor %}")
            .find("grew past the limit") != std::string::npos);
  CHECK(error_of("{% set s = [1] %}{% for i in range(64) %}{% set s = s + s %}{% endfor %}")
            .find("the template's values would take more than") != std::string::npos);
  CHECK(error_of("{% set s = 'ab' %}{% for i in range(64) %}{% set s = s.replace('a', 'aa') %}{% "
                 "endfor %}")
            .find("exceeds") != std::string::npos);
  CHECK(error_of("{{ range(9223372036854775807) | length }}") ==
        "line 1: the template's values would take more than 67108864 bytes (making a list of "
        "9223372036854775807 items)");
  // Values nested deeper than the limit (printing and freeing them would recurse).
  CHECK(error_of("{% set a = [] %}{% for i in range(1000) %}{% set a = [a] %}{% endfor %}")
            .find("nested deeper than") != std::string::npos);
}

TEST_CASE("chat templates: variables from JSON", "[chat]") {
  CHECK(render("{{ messages[0].content }}", R"([{"role": "user", "content": "hi"}])") == "hi");
  CHECK(render("{{ tools | length }} {{ n }} {{ f }} {{ b }}",
               R"({"tools": [1, 2], "n": 3, "f": 0.5, "b": false})") == "2 3 0.5 false");
  CHECK_THROWS_WITH(chat::variables_from_json("[1,", "m.json"),
                    Catch::Contains("m.json: not valid JSON"));
  CHECK_THROWS_WITH(chat::variables_from_json("3", "m.json"),
                    "m.json: expected a list of messages or an object of variables");
  CHECK_THROWS_WITH(
      chat::variables_from_json(std::string(300, '[') + std::string(300, ']'), "m.json"),
      Catch::Contains("nested deeper than"));
}

TEST_CASE("chat templates: a model's own from tokenizer_config.json", "[chat]") {
  const chat::ModelChatTemplate llama3 =
      chat::read_tokenizer_config(llama::test::model_path("hf/rand-llama3/tokenizer_config.json"));
  CHECK(llama3.bos_token == "<|begin_of_text|>");
  CHECK(llama3.eos_token == "<|end_of_text|>");
  chat::Object vars = chat::variables_from_json(R"([{"role": "user", "content": " Hi "}])", "m");
  vars.emplace_back("bos_token", Value::string(llama3.bos_token));
  CHECK(ChatTemplate::parse(llama3.source).render(vars) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  const chat::ModelChatTemplate none =
      chat::read_tokenizer_config(llama::test::model_path("hf/stories1M/tokenizer_config.json"));
  CHECK(none.source.empty());
  CHECK(none.bos_token == "<s>");

  const auto config = [](const std::string& name, const std::string& text) {
    const std::string path = llama::test::temp_path(name);
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    llama::test::write_file(path, std::vector<std::byte>(p, p + text.size()));
    return path;
  };
  const chat::ModelChatTemplate named = chat::read_tokenizer_config(
      config("named.json", R"({"chat_template": [{"name": "tool_use", "template": "T"},
                       {"name": "default", "template": "D"}],
                       "bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": null})"));
  CHECK(named.source == "D");
  CHECK(named.bos_token == "<s>");
  CHECK(named.eos_token.empty());
  const std::string bad = config("bad.json", R"({"chat_template": 3})");
  CHECK_THROWS_WITH(chat::read_tokenizer_config(bad),
                    bad + ": chat_template is neither a string nor a list of named templates");
  const std::string nodefault =
      config("nodefault.json", R"({"chat_template": [{"name": "x", "template": "T"}]})");
  CHECK_THROWS_WITH(chat::read_tokenizer_config(nodefault),
                    nodefault + ": chat_template lists no template named \"default\"");
  const std::string broken = config("broken.json", "{");
  CHECK_THROWS_WITH(chat::read_tokenizer_config(broken),
                    Catch::StartsWith(broken + ": invalid JSON"));
  CHECK_THROWS_WITH(chat::read_tokenizer_config("/nonexistent/tokenizer_config.json"),
                    Catch::StartsWith("/nonexistent/tokenizer_config.json: cannot open"));
}
