// Chat mode: run.c's Llama 2 template, the turn mechanics of ChatSession
// (positions, the EOS fed before the next turn, steps), and llama-cli -m chat
// with piped and in-memory standard input.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli_run.hpp"
#include "llama/chat_session.hpp"
#include "llama/error.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"
#include "scripted_backend.hpp"
#include "test_support.hpp"

using namespace llama;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

struct CliRun {
  int code;
  std::string out, err;
};

CliRun chat_cli(std::vector<std::string> args, const std::string& input) {
  std::vector<std::string> all = {
      "-c", test::model_path("mini32k.bin"), "-k", test::model_path("tokenizer.bin"), "-m", "chat"};
  all.insert(all.end(), args.begin(), args.end());
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = cli::run_cli(all, in, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("chat turns are rendered with run.c's Llama 2 template", "[chat]") {
  CHECK(render_chat_turn("Be brief.", "Hi", true) ==
        "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]");
  CHECK(render_chat_turn("", "Hi", true) == "[INST] Hi [/INST]");
  CHECK(render_chat_turn("Be brief.", "Again", false) == "[INST] Again [/INST]");
}

TEST_CASE("a chat session forces each turn and samples until EOS", "[chat]") {
  const Checkpoint ck = Checkpoint::open(test::model_path("mini32k.bin"));
  const Llama2cTokenizer tok(test::model_path("tokenizer.bin"), ck.config().vocab_size);
  const auto first = tok.encode(render_chat_turn("sys", "hi", true), true, false);
  const auto second = tok.encode(render_chat_turn("sys", "more", false), true, false);
  REQUIRE(first.back() == second.back());  // both end in "[/INST]"
  test::ScriptedBackend stub(7);
  stub.prepare(ck.model());
  stub.next = {{first.back(), 100}, {100, 101}, {101, kEosToken}};
  Sampler sampler(ck.config().vocab_size, 0.f, 0.9f, 1);

  SECTION("two turns, the EOS fed in between as run.c does") {
    ChatSession session(stub, ck.config(), tok, sampler, "sys", 0);
    std::string streamed;
    const ChatTurn t1 = session.turn("hi", [&](std::string_view p) { streamed += p; });
    CHECK(t1.prompt_tokens == first);
    CHECK(t1.reply_tokens == std::vector<int32_t>{100, 101});
    CHECK(t1.stop == ChatStop::eos);
    CHECK(t1.text == tok.decode_token(first.back(), 100) + tok.decode_token(100, 101));
    CHECK(streamed == t1.text);
    const ChatTurn t2 = session.turn("more");
    CHECK(t2.prompt_tokens == second);
    CHECK(t2.reply_tokens == std::vector<int32_t>{100, 101});

    std::vector<std::pair<int32_t, int64_t>> want;
    for (int32_t t : first) want.emplace_back(t, int64_t(want.size()));
    want.emplace_back(100, int64_t(want.size()));
    want.emplace_back(101, int64_t(want.size()));
    want.emplace_back(kEosToken, int64_t(want.size()));
    for (int32_t t : second) want.emplace_back(t, int64_t(want.size()));
    want.emplace_back(100, int64_t(want.size()));
    want.emplace_back(101, int64_t(want.size()));
    CHECK(stub.fed == want);
    CHECK(session.position() == int64_t(want.size()));
  }
  SECTION("steps end a reply and then the session") {
    const auto n = int64_t(first.size());
    ChatSession session(stub, ck.config(), tok, sampler, "sys", n + 1);
    const ChatTurn t = session.turn("hi");
    CHECK(t.reply_tokens == std::vector<int32_t>{100, 101});  // sampled after the last position
    CHECK(t.stop == ChatStop::steps);
    CHECK(session.finished());
    CHECK_THROWS_AS(session.turn("more"), Error);
  }
  SECTION("a turn longer than the positions left stops inside the prompt") {
    ChatSession session(stub, ck.config(), tok, sampler, "sys", 5);
    const ChatTurn t = session.turn("hi");
    CHECK(t.reply_tokens.empty());
    CHECK(t.stop == ChatStop::steps);
    CHECK(stub.fed.size() == 5);
  }
}

TEST_CASE("llama-cli -m chat reads later user turns from standard input", "[chat][cli]") {
  SECTION("first message from -p, end of input ends cleanly") {
    const CliRun r = chat_cli({"-p", "Hello", "-y", "Be brief.", "-s", "40"}, "");
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, StartsWith("Assistant: "));
  }
  SECTION("first message from standard input") {
    const CliRun r = chat_cli({"-s", "30"}, "Tell me a story\n");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, StartsWith("User: Assistant: "));
  }
  SECTION("empty input: the session ends before any turn") {
    const CliRun r = chat_cli({}, "");
    CHECK(r.code == 0);
    CHECK(r.out == "User: \n");
  }
  SECTION("a long line has no fixed-size buffer to overflow") {
    std::string line;
    for (int i = 0; i < 400; ++i) line += "word" + std::to_string(i % 10) + " ";
    const CliRun r = chat_cli({"--format", "json"}, line + "\n");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["turns"].size() == 1);
    CHECK(j["turns"][0]["user"] == line);
    CHECK(j["turns"][0]["stop_reason"] == "steps");  // the turn is longer than seq_len 128
    CHECK(j["positions"] == 128);
  }
  SECTION("json lists each turn") {
    const CliRun r = chat_cli({"-p", "Hi", "-s", "20", "--format", "json"}, "");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const Llama2cTokenizer tok(test::model_path("tokenizer.bin"), 32000);
    CHECK(j["turns"][0]["prompt_tokens"].get<std::vector<int32_t>>() ==
          tok.encode("[INST] Hi [/INST]", true, false));
    // 20 positions; the token sampled after the last one is printed too, as run.c does.
    const auto prompt = tok.encode("[INST] Hi [/INST]", true, false);
    CHECK(j["turns"][0]["reply_tokens"].size() + prompt.size() == 21);
    CHECK(j["stop_reason"] == "steps");
  }
  SECTION("--tokenize prints the rendered first turn") {
    const CliRun r =
        chat_cli({"-p", "Hi", "-y", "Be brief.", "--tokenize", "--format", "json"}, "");
    REQUIRE(r.code == 0);
    const Llama2cTokenizer tok(test::model_path("tokenizer.bin"), 32000);
    CHECK(nlohmann::json::parse(r.out)["prompt_tokens"].get<std::vector<int32_t>>() ==
          tok.encode("[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]", true, false));
  }
  SECTION("bad mode flags are usage errors") {
    CHECK(chat_cli({"-m", "talk"}, "").code == 2);
    std::istringstream in;
    std::ostringstream out, err;
    CHECK(cli::run_cli({"-c", test::model_path("mini32k.bin"), "-y", "sys"}, in, out, err) == 2);
    CHECK_THAT(err.str(), Contains("--system-prompt"));
  }
}

TEST_CASE("llama-cli -m chat through a real pipe", "[chat][cli]") {
  const std::string out_path = test::temp_path("chat-pipe.out");
  const std::string cmd = std::string("printf 'Hi there\\nAnd then?\\n' | '") + LLAMA_CLI_PATH +
                          "' -c '" + test::model_path("mini32k.bin") + "' -k '" +
                          test::model_path("tokenizer.bin") + "' -m chat -s 64 >'" + out_path +
                          "' 2>&1";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(out_path);
  std::stringstream s;
  s << in.rdbuf();
  CHECK_THAT(s.str(), StartsWith("User: Assistant: "));
}
