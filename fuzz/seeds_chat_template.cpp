// Seeds for fuzz_chat_template: small templates written here in the styles
// real chat templates use (Llama 2's alternation check, ChatML, namespaces,
// whitespace control, filters), one with its own variables after a NUL, and
// hostile ones at the engine's limits (issue 39): chains just past the
// expression height limit, huge ranges and slice steps, values that double,
// walks of large shared values, lookups in large dicts.
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Templates that push the budgets and bounds: each is refused by a limit (or
// renders at its edge), and mutations of them explore around it.
void hostile_seeds(const std::filesystem::path& dir) {
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"chain-filters", "{{ 'A'" + repeat("|lower", 260) + " }}"},
      {"chain-attributes", "{{ messages" + repeat(".a", 300) + " }}"},
      {"chain-operators", "{{ 1" + repeat(" + 1", 150) + repeat(" ~ 1", 150) + " }}"},
      {"chain-mixed",
       "{% if x" + repeat(" and x[0]()", 100) + " or y" + repeat("|list", 100) + " %}{% endif %}"},
      {"chain-parens",
       "{{ " + repeat("(", 120) + "x" + repeat(".a", 140) + repeat(")", 120) + " }}"},
      {"slices",
       "{{ [1, 2, 3][1::9223372036854775807] }}{{ 'abc'[::-9223372036854775807 - 1] }}"
       "{{ 'h\u00e9llo'[-9223372036854775807 - 1:9223372036854775807:2] }}"
       "{{ [1, 2, 3][9223372036854775807:-9223372036854775807:-3] }}"},
      {"integers",
       "{{ range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904) "
       "| list }}{{ (-9223372036854775807 - 1) % -1 }}{{ -(-9223372036854775807 - 1) "
       "}}{{ 3 ** 40 }}{{ 9223372036854775807 // -1 }}"},
      {"big-range", "{% set a = range(16000000) %}{% set b = range(16000000) %}{{ a | length }}"},
      {"double-list",
       "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + "
       "ns.l %}{% endfor %}{{ ns.l | length }}"},
      {"double-string",
       "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = "
       "ns.s ~ ns.s %}{% endfor %}{{ ns.s | list | length }}{{ ns.s.split('a') | "
       "length }}"},
      {"tojson-loop",
       "{% set l = range(100000) | list %}{% for i in range(1000) %}{{ (l | tojson) "
       "| length }}{% endfor %}"},
      {"in-loop",
       "{% set l = range(100000) %}{% for i in range(500000) %}{% if -1 in l %}x{% endif "
       "%}{% endfor %}"},
      {"shared-tower",
       "{% set l = range(100) %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}"
       "{% set n = [m, m, m, m, m, m, m, m, m, m] %}{% set o = [n, n, n, n, n, n, "
       "n, n, n, n] %}{{ o == o | list | reverse }}{{ o | tojson(indent=64) | "
       "length }}{{ o | string | length }}"},
      {"nested-loops",
       "{% set r = range(1000) %}{% for i in r %}{% for j in r if j > i %}{{ "
       "loop.index }}{% endfor %}{% endfor %}"},
      {"dict-literal", "{{ {" + repeat("'k': 1, ", 200) + "'z': 2} | length }}"},
      {"big-dict",
       std::string("{% for i in range(100000) %}{{ d.nothere }}{{ d.k1 }}{% endfor %}") + '\0' +
           "{\"d\": {" +
           [] {
             std::string keys;
             for (int i = 0; i < 300; ++i) {
               keys += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
             }
             return keys;
           }() +
           "}}"},
      {"macro-recursion", "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}"},
  };
  for (const auto& [name, text] : seeds) write(dir, name, text);
}

}  // namespace

void chat_template_seeds(const std::filesystem::path& dir) {
  write(dir, "alternation",
        "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
        "{% set system_message = messages[0]['content'] %}{% else %}"
        "{% set loop_messages = messages %}{% set system_message = false %}{% endif %}"
        "{% for message in loop_messages %}{% if (message['role'] == 'user') != "
        "(loop.index0 % 2 == 0) %}{{ raise_exception('roles must alternate') }}{% endif %}"
        "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + "
        "message['content'].strip() + ' [/INST]' }}{% else %}{{ ' ' + message['content'] | "
        "trim + ' ' + eos_token }}{% endif %}{% endfor %}");
  write(dir, "chatml",
        "{% for message in messages %}\n{{'<|im_start|>' + message['role'] + '\\n' + "
        "message['content'] + '<|im_end|>' + '\\n'}}\n{% endfor %}\n"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}\n");
  write(dir, "namespace",
        "{%- set ns = namespace(found=false, n=0) -%}\n{%- for m in messages -%}\n"
        "  {%- if m.role == 'system' -%}{%- set ns.found = true -%}{%- endif -%}\n"
        "  {%- set ns.n = ns.n + m.content | length -%}\n{%- endfor -%}\n"
        "{{ ns.found }} {{ ns.n }} {# done #}");
  write(dir, "filters",
        "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | "
        "join(', ') }}|{{ messages | tojson(indent=2) }}|{{ x | default('d') }}|"
        "{{ 'a b'.split() | list | length }}|{{ 'Hi'.upper() ~ 'x'.replace('x', 'y') }}|"
        "{{ range(3) | list }}|{{ messages[::-1][0].role }}|{{ 1 if none is none else 2 }}");
  write(dir, "loops",
        "{% for k, v in {'a': 1, 'b': [2, 3]}.items() if k != 'z' %}{{ loop.index }}{{ k }}"
        "{{ v }}{% if loop.last %}.{% endif %}{% else %}empty{% endfor %}"
        "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% elif i > 3 %}{% break %}"
        "{% endif %}{{ i ** 2 // 3 % 5 - -1 }}{% endfor %}{% set a, b = 1, 2.5 %}{{ a + b }}");
  write(dir, "own-variables",
        std::string("{{ tools[0].name }}{% for m in messages %}{{ m.content }}{% endfor %}") +
            '\0' + R"({"tools": [{"name": "f", "x": null}], "messages": [{"content": "é"}]})");
  write(dir, "macros",
        "{% macro render(m, prefix='> ') -%}\n{{ prefix }}{{ m.role }}: {{ m.content | trim | "
        "indent(2) }}\n{%- endmacro %}{% for m in messages %}{{ render(m) }}{{ render(m, "
        "prefix='') }}{% endfor %}");
  write(
      dir, "tokenizer-config",
      R"({"bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "</s>",)"
      R"( "chat_template": [{"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}"}]})");
  write(dir, "errors", "{% if %}{{ 'unterminated }}{% macro m() %}{% endmacro %}{# c");
  write(dir, "config-types",
        R"({"chat_template": [{"name": 5, "template": "T"}, {"name": "default"}],)"
        R"( "bos_token": {"content": 1}, "eos_token": 7})");
  hostile_seeds(dir);
}
