// llama-template: prints exactly the render (no newline added) with exit 0,
// one line and exit 1 for a template error or a bad file, exit 2 for bad usage.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "template_run.hpp"
#include "test_support.hpp"

namespace {

struct Run {
  int code;
  std::string out, err;
};

Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = llama::chat_app::run_template(args, out, err);
  return {code, out.str(), err.str()};
}

std::string file(const std::string& name, const std::string& text) {
  const std::string path = llama::test::temp_path(name);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  llama::test::write_file(path, std::vector<std::byte>(p, p + text.size()));
  return path;
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

}  // namespace

TEST_CASE("llama-template renders a conversation exactly", "[chat][llama-template]") {
  const std::string tpl =
      file("chatml.jinja",
           "{% for m in messages %}{{ bos_token }}<|{{ m.role }}|>{{ m.content }}"
           "{{ eos_token }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}\n");
  const std::string msgs = file("m.json", R"([{"role": "user", "content": "Hi"}])");
  Run r = run({"--template", tpl, "--messages", msgs, "--bos-token", "<s>", "--eos-token", "</s>",
               "--add-generation-prompt"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "<s><|user|>Hi</s>\n<|assistant|>");
  r = run({"--template", tpl, "--messages", msgs});
  CHECK(r.code == 0);
  CHECK(r.out == "<|user|>Hi\n");
  // An object gives variables by name; its own bos_token wins over the default.
  const std::string vars =
      file("v.json", R"({"messages": [{"role": "a", "content": "b"}], "bos_token": "B"})");
  r = run({"--template", tpl, "--messages", vars});
  CHECK(r.out == "B<|a|>b\n");
}

TEST_CASE("llama-template reads a model's tokenizer_config.json", "[chat][llama-template]") {
  const std::string config = llama::test::model_path("hf/rand-llama3/tokenizer_config.json");
  const std::string msgs = file("hi.json", R"([{"role": "user", "content": "Hi"}])");
  Run r = run({"--template", config, "--messages", msgs});
  CHECK(r.code == 0);
  CHECK(r.out ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  r = run({"--template", config, "--messages", msgs, "--bos-token", "B"});
  CHECK(r.out.starts_with("B<|start_header_id|>"));
  r = run({"--template", llama::test::model_path("hf/stories1M/tokenizer_config.json"),
           "--messages", msgs});
  CHECK(r.code == 1);
  CHECK(r.err ==
        "llama-template: " + llama::test::model_path("hf/stories1M/tokenizer_config.json") +
            ": has no chat_template\n");
}

TEST_CASE("llama-template: the reference set through the program", "[chat][llama-template]") {
  const nlohmann::json ref =
      llama::test::load_json(llama::test::reference_path("chat-templates.json"));
  int checked = 0;
  for (const auto& t : ref.at("templates")) {
    const std::string tpl = file("ref.jinja", t.at("template").get<std::string>());
    for (const auto& r : t.at("renders")) {
      const std::string msgs = file(
          "ref.json", ref.at("conversations").at(r.at("conversation").get<std::string>()).dump());
      std::vector<std::string> args{"--template",  tpl,
                                    "--messages",  msgs,
                                    "--bos-token", t.at("bos_token").get<std::string>(),
                                    "--eos-token", t.at("eos_token").get<std::string>()};
      if (r.at("add_generation_prompt").get<bool>()) args.push_back("--add-generation-prompt");
      const llama::test::ProcessResult p = llama::test::run_program(LLAMA_TEMPLATE_PATH, args);
      INFO(t.at("name").get<std::string>() << " " << r.at("conversation"));
      if (r.contains("text")) {
        CHECK(p.exit_code == 0);
        CHECK(p.out == r.at("text").get<std::string>());
      } else {
        CHECK(p.exit_code == 1);
        CHECK(p.out.empty());
        CHECK(one_line(p.err));
        CHECK(p.err == "llama-template: " + tpl + ": line 1: the template raised: " +
                           r.at("error").get<std::string>() + "\n");
      }
      ++checked;
    }
  }
  CHECK(checked == 48);
}

TEST_CASE("llama-template: bad input is one line and a non-zero exit", "[chat][llama-template]") {
  const std::string msgs = file("ok.json", R"([{"role": "user", "content": "Hi"}])");
  const std::string good = file("good.jinja", "{{ messages[0].content }}");
  struct Bad {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const std::vector<Bad> cases = {
      {{"--messages", msgs},
       2,
       "llama-template: --template: required (--template FILE) (see --help)\n"},
      {{"--template", good},
       2,
       "llama-template: --messages: required (--messages FILE.json) (see --help)\n"},
      {{"--template", good, "--messages", msgs, "--bogus"}, 2, ""},
      {{"--template", "/nonexistent/t.jinja", "--messages", msgs},
       1,
       "llama-template: --template: /nonexistent/t.jinja: cannot open: No such file or "
       "directory\n"},
      {{"--template", good, "--messages", "/nonexistent/m.json"},
       1,
       "llama-template: --messages: /nonexistent/m.json: cannot open: No such file or "
       "directory\n"},
      {{"--template", good, "--messages", file("bad.json", "[{")}, 1, ""},
      {{"--template", good, "--messages", file("num.json", "42")}, 1, ""},
      {{"--template", file("syntax.jinja", "x\n{% if %}"), "--messages", msgs}, 1, ""},
      {{"--template", file("filter.jinja", "{% filter upper %}x{% endfilter %}"), "--messages",
        msgs},
       1,
       ""},
      {{"--template",
        file("loop.jinja",
             "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"),
        "--messages", msgs},
       1,
       ""},
      {{"--template",
        file("rejects.jinja",
             "{% if messages[0].role != 'system' %}{{ raise_exception('a system message first') "
             "}}{% endif %}"),
        "--messages", msgs},
       1,
       ""},
  };
  for (const Bad& b : cases) {
    std::string cmd;
    for (const auto& a : b.args) cmd += a + " ";
    INFO(cmd);
    const Run r = run(b.args);
    CHECK(r.code == b.code);
    CHECK(r.out.empty());
    CHECK(one_line(r.err));
    CHECK(r.err.starts_with("llama-template: "));
    if (!b.err.empty()) CHECK(r.err == b.err);
  }
  // The error names the template file and line.
  const std::string syntax = file("syntax2.jinja", "ok\n\n{{ 1 + }}");
  const Run r = run({"--template", syntax, "--messages", msgs});
  CHECK(r.err == "llama-template: " + syntax + ": line 3: unexpected '}}' in an expression\n");
  const std::string rejects =
      file("rejects2.jinja", "{{ raise_exception('a system message first') }}");
  CHECK(run({"--template", rejects, "--messages", msgs}).err ==
        "llama-template: " + rejects + ": line 1: the template raised: a system message first\n");
}
