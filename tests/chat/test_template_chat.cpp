// Chat with a model's Jinja template: each turn renders the whole
// conversation, only the tokens past what the KV cache already holds are run,
// the template's bos/eos strings become ids; llama-cli's --chat-template, the
// template beside a tokenizer.json, and --tokenize -m chat showing the turn.
#include <catch2/catch.hpp>
#include <sstream>

#include "cli_run.hpp"
#include "llama/chat/chat_format.hpp"
#include "llama/chat_session.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/tokenizers/tokenizer.hpp"
#include "scripted_backend.hpp"
#include "test_support.hpp"

using namespace llama;

namespace {

chat::ModelChatTemplate chatml() {
  chat::ModelChatTemplate t;
  t.source =
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}"
      "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";
  t.bos_token = "<s>";
  t.eos_token = "</s>";
  t.origin = "chatml";
  return t;
}

struct CliRun {
  int code;
  std::string out, err;
};

CliRun run_cli_chat(const std::vector<std::string>& args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = cli::run_cli(args, in, out, err);
  return {code, out.str(), err.str()};
}

std::string file(const std::string& name, const std::string& text) {
  const std::string path = test::temp_path(name);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  test::write_file(path, std::vector<std::byte>(p, p + text.size()));
  return path;
}

}  // namespace

TEST_CASE("template chat: bos/eos strings become ids, the rest is encoded",
          "[chat][template-chat]") {
  const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  const chat::TemplateChatFormat f(chatml());
  const std::string text = f.render({{"user", "Hi"}});
  CHECK(text == "<s><user>Hi</s><assistant>");
  std::vector<int32_t> want = {tok->special().bos};
  for (int32_t id : tok->encode("<user>Hi", {.add_special = false})) want.push_back(id);
  want.push_back(tok->special().eos.front());
  for (int32_t id : tok->encode("<assistant>", {.add_special = false})) want.push_back(id);
  CHECK(f.encode(*tok, text, true) == want);
  // A template that rejects the conversation: its message, naming the template.
  chat::ModelChatTemplate strict = chatml();
  strict.source =
      "{% if messages[0].role != 'system' %}{{ raise_exception('system first') }}{% endif %}";
  CHECK_THROWS_WITH(chat::TemplateChatFormat(strict).render({{"user", "Hi"}}),
                    "chatml: chat template line 1: the template raised: system first");
  strict.source = "{% if %}";
  CHECK_THROWS_WITH(chat::TemplateChatFormat(strict),
                    Catch::StartsWith("chatml: chat template line 1: "));
}

TEST_CASE("template chat: a turn runs only what the KV cache lacks", "[chat][template-chat]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("stories1M.bin"));
  const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  const chat::TemplateChatFormat f(chatml());
  const std::vector<int32_t> t1 = f.encode(*tok, f.render({{"user", "Hi"}}), true);
  test::ScriptedBackend backend(2);  // EOS after any token not scripted
  backend.prepare(ck.model());
  backend.next = {{t1.back(), 300}, {300, 301}};  // the reply: 300 301, then EOS
  Sampler sampler(2048, 0.f, 0.9f, 1);
  ChatSession session(backend, ck.config(), *tok, sampler, "", 0, true, &f);
  const ChatTurn r1 = session.turn("Hi");
  CHECK(r1.prompt_tokens == t1);
  CHECK(r1.reply_tokens == std::vector<int32_t>{300, 301});
  CHECK(r1.stop == ChatStop::eos);
  const std::string reply = r1.text;
  // The second turn renders the first with the reply; what the cache holds is not run again.
  const std::vector<int32_t> all =
      f.encode(*tok, f.render({{"user", "Hi"}, {"assistant", reply}, {"user", "More"}}), true);
  // The cache holds the turn and both reply tokens (EOS was sampled after 301, not run).
  std::vector<int32_t> held = t1;
  held.insert(held.end(), {300, 301});
  backend.fed.clear();
  const ChatTurn r2 = session.turn("More");
  size_t same = 0;
  while (same < held.size() && same + 1 < all.size() && all[same] == held[same]) ++same;
  CHECK(same >= t1.size());
  CHECK(r2.prompt_tokens ==
        std::vector<int32_t>(all.begin() + static_cast<std::ptrdiff_t>(same), all.end()));
  REQUIRE(!backend.fed.empty());
  CHECK(backend.fed.front().second == static_cast<int64_t>(same));  // resumed there, in order
  for (size_t i = 1; i < backend.fed.size(); ++i)
    CHECK(backend.fed[i].second == backend.fed[i - 1].second + 1);
}

TEST_CASE("llama-cli -m chat: --chat-template, the tokenizer's own, --tokenize shows the turn",
          "[chat][template-chat][cli]") {
  const std::string model = test::model_path("stories1M.bin");
  const std::string tpl = file("chatml.jinja", chatml().source);
  const auto tok = open_tokenizer(test::model_path("tok2048.bin"), {.vocab_size = 2048});
  const chat::TemplateChatFormat f(chatml());
  const std::vector<int32_t> want =
      f.encode(*tok, f.render({{"system", "Be kind."}, {"user", "Hi"}}), true);
  CliRun r = run_cli_chat({"-c", model, "-k", test::model_path("tok2048.bin"), "-m", "chat",
                           "--chat-template", tpl, "-y", "Be kind.", "-p", "Hi", "--tokenize",
                           "--format", "json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>() == want);
  // A chat runs with it (the bos/eos strings come from the tokenizer's pieces here).
  r = run_cli_chat(
      {"-c", model, "-k", test::model_path("tok2048.bin"), "-m", "chat", "--chat-template", tpl,
       "-p", "Once upon a time", "-s", "64", "--format", "json"},
      "and then?\n");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["turns"].size() >= 1);
  // The Llama 3 tokenizer directory carries its template in tokenizer_config.json.
  r = run_cli_chat({"-k", test::model_path("hf/llama3-tokenizer"), "-m", "chat", "-p", "Hi",
                    "--tokenize", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto ids = nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>();
  REQUIRE(ids.size() > 4);
  CHECK(ids.front() == 128000);                            // <|begin_of_text|>
  CHECK(std::count(ids.begin(), ids.end(), 128009) == 1);  // <|eot_id|> after the user turn
  // Bad input: one line, non-zero exit.
  r = run_cli_chat({"-c", model, "-k", test::model_path("tok2048.bin"), "-m", "chat",
                    "--chat-template", "/nonexistent.jinja", "-p", "Hi"});
  CHECK(r.code == 1);
  CHECK(r.err ==
        "llama-cli: --chat-template: /nonexistent.jinja: cannot open: No such file or directory\n");
  const std::string broken = file("broken.jinja", "{% for %}");
  r = run_cli_chat({"-c", model, "-k", test::model_path("tok2048.bin"), "-m", "chat",
                    "--chat-template", broken, "-p", "Hi"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("llama-cli: " + broken + ": chat template line 1: "));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  r = run_cli_chat({"-c", model, "-k", test::model_path("tok2048.bin"), "--chat-template", tpl});
  CHECK(r.code == 2);
  CHECK(r.err == "llama-cli: --chat-template: only applies to --mode chat (see --help)\n");
}
