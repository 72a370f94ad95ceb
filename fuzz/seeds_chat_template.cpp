// Seeds for fuzz_chat_template: small templates written here in the styles
// real chat templates use (Llama 2's alternation check, ChatML, namespaces,
// whitespace control, filters), one with its own variables after a NUL.
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace {

void write(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
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
}
