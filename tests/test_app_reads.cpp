// Files named on the command line (issue 39): every app reads them through the
// one bounded reader, refuses what is not a regular file (a directory, /dev/zero,
// a FIFO) and what is larger than such a file may be, with one line naming the
// flag and the file; chat's standard input is read a bounded line at a time; and
// running out of memory names the stage it happened in. Limits: docs/robustness.md.
#include <sys/stat.h>
#include <sys/types.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "convert_run.hpp"
#include "error_report.hpp"
#include "llama/error.hpp"
#include "llama/mapped_file.hpp"
#include "llama/registry.hpp"
#include "perplexity_run.hpp"
#include "template_run.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using namespace llama;

namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run cli_run(const std::vector<std::string>& args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  Run r;
  r.code = cli::run_cli(args, in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

Run tmpl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Run r;
  r.code = chat_app::run_template(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

Run ppl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Run r;
  r.code = perplexity_app::run_perplexity(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string text_file(const std::string& name, const std::string& text) {
  const std::string path = test::temp_path(name);
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  test::write_file(path, std::vector<std::byte>(p, p + text.size()));
  return path;
}

// A file of `bytes` bytes that takes no disk (a hole): refused on its size alone.
std::string sparse_file(const std::string& name, int64_t bytes) {
  const std::string path = text_file(name, "");
  std::filesystem::resize_file(path, static_cast<uintmax_t>(bytes));
  return path;
}

// A FIFO nobody writes to: opening it for reading the usual way waits forever.
std::string fifo(const std::string& name) {
  const std::string path = test::temp_path(name);
  std::filesystem::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

std::string a_directory() { return std::filesystem::temp_directory_path().string(); }

// The one line an app printed, and exit 1.
void check_refused(const Run& r, const std::string& line) {
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == line + "\n");
}

std::vector<std::string> chat_args() {
  return {"-c", test::model_path("stories1M.bin"),
          "-k", test::model_path("tok2048.bin"),
          "-m", "chat",
          "-s", "8",
          "-t", "0"};
}

template <typename... More>
std::vector<std::string> with(std::vector<std::string> args, More... more) {
  (args.emplace_back(more), ...);
  return args;
}

// Backends that run out of memory in one stage, to see the stage named.
class OutOfMemoryBackend : public InferenceBackend {
 public:
  explicit OutOfMemoryBackend(bool in_prepare) : in_prepare_(in_prepare) {}
  std::string name() const override {
    return in_prepare_ ? "test-oom-prepare" : "test-oom-forward";
  }
  void prepare(const Model& m) override {
    if (in_prepare_) throw std::bad_alloc();
    logits_.assign(static_cast<size_t>(m.config.vocab_size), 0.f);
  }
  std::span<const float> forward(int32_t, int64_t) override { throw std::bad_alloc(); }
  std::span<const float> forward_batch(std::span<const int32_t>, int64_t, bool) override {
    throw std::bad_alloc();
  }

 private:
  bool in_prepare_;
  std::vector<float> logits_;
};

const BackendRegistrar kOomPrepare{
    "test-oom-prepare", "throws std::bad_alloc in prepare",
    [](const BackendOptions&) { return std::make_unique<OutOfMemoryBackend>(true); }};
const BackendRegistrar kOomForward{
    "test-oom-forward", "throws std::bad_alloc in forward",
    [](const BackendOptions&) { return std::make_unique<OutOfMemoryBackend>(false); }};

}  // namespace

TEST_CASE("read_text_file refuses what is not a regular file, without blocking", "[reads]") {
  const std::string dir = a_directory();
  CHECK_THROWS_WITH(read_text_file(dir, 1 << 20), dir + ": not a regular file (a directory)");
  CHECK_THROWS_WITH(read_text_file("/dev/zero", 1 << 20),
                    "/dev/zero: not a regular file (a character device)");
  const std::string pipe = fifo("reads.fifo");
  CHECK_THROWS_WITH(read_text_file(pipe, 1 << 20), pipe + ": not a regular file (a FIFO)");
  // The mapping reader of checkpoints and tokenizers refuses the same way.
  CHECK_THROWS_WITH(MappedFile(pipe), pipe + ": not a regular file (a FIFO)");
  CHECK_THROWS_WITH(read_text_file("/nonexistent.txt", 10),
                    "/nonexistent.txt: cannot open: No such file or directory");
}

TEST_CASE("read_text_file bounds the read by the limit, before and while reading", "[reads]") {
  const std::string path = text_file("reads-limit.txt", std::string(100, 'x'));
  CHECK(read_text_file(path, 100) == std::string(100, 'x'));
  CHECK_THROWS_WITH(read_text_file(path, 99, "a chat template"),
                    path + ": 100 bytes, more than the 99 a chat template may have");
  // A /proc file says it has 0 bytes and then has more: the read itself stops at the
  // limit (as for a file that grows while it is read) instead of trusting the size.
  CHECK_THROWS_WITH(read_text_file("/proc/self/status", 16),
                    "/proc/self/status: grew past the 16 bytes such a file may have while being "
                    "read");
  CHECK_THAT(read_text_file("/proc/self/status", 1 << 20), Contains("Name:"));
}

TEST_CASE("llama-cli -m chat --chat-template: special files, directories and sizes",
          "[reads][cli]") {
  // Issue 39: /dev/zero was read for 4 GB; a directory was taken and failed later
  // with "the turn encodes to no tokens".
  check_refused(cli_run(with(chat_args(), "--chat-template", "/dev/zero"), "Hello\n"),
                "llama-cli: --chat-template: /dev/zero: not a regular file (a character device)");
  const std::string dir = a_directory();
  check_refused(cli_run(with(chat_args(), "--chat-template", dir), "Hello\n"),
                "llama-cli: --chat-template: " + dir + ": not a regular file (a directory)");
  const std::string pipe = fifo("chat-template.fifo");
  check_refused(cli_run(with(chat_args(), "--chat-template", pipe), "Hello\n"),
                "llama-cli: --chat-template: " + pipe + ": not a regular file (a FIFO)");
  const std::string big = sparse_file("big.jinja", (int64_t{1} << 20) + 1);
  check_refused(cli_run(with(chat_args(), "--chat-template", big), "Hello\n"),
                "llama-cli: --chat-template: " + big +
                    ": 1048577 bytes, more than the 1048576 a chat template may have");
  const std::string empty = text_file("empty.jinja", "");
  check_refused(cli_run(with(chat_args(), "--chat-template", empty), "Hello\n"),
                "llama-cli: --chat-template: " + empty + ": is empty");
  // A tokenizer_config.json given as the template goes through the same reader.
  const std::string json_dir = test::temp_path("config-dir.json");
  std::filesystem::create_directories(json_dir);
  check_refused(cli_run(with(chat_args(), "--chat-template", json_dir), "Hello\n"),
                "llama-cli: --chat-template: " + json_dir + ": not a regular file (a directory)");
  // The same flags with a real template still chat.
  const std::string good =
      text_file("good.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const Run ok = cli_run(with(chat_args(), "--chat-template", good), "Hello\n");
  INFO(ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("llama-cli -m chat refuses a line of standard input over 1 MiB", "[reads][cli]") {
  // Issue 39: a 50 MB line hung; it is refused once 1 MiB of it has been read.
  const std::string line(2 << 20, 'a');
  const Run r = cli_run(chat_args(), line + "\nHi\n");
  CHECK(r.code == 1);
  CHECK(r.err ==
        "llama-cli: standard input: line 1 is longer than 1048576 bytes, the most one "
        "chat turn may have\n");
  // A line without end (what /dev/zero on standard input gives) is refused the same way.
  const Run endless = cli_run(chat_args(), std::string((1 << 20) + 1, '\0'));
  CHECK(endless.code == 1);
  CHECK_THAT(endless.err, Contains("standard input: line 1 is longer than 1048576 bytes"));
  // The last line may lack its newline.
  const Run last = cli_run(with(chat_args(), "--format", "json"), "Hi");
  CHECK(last.code == 0);
  CHECK_THAT(last.out, Contains("\"user\":\"Hi\""));
}

TEST_CASE("llama-cli -c and -k refuse devices and FIFOs before any reader sniffs them",
          "[reads][cli]") {
  // Sniffing a FIFO for the GGUF magic or a JSON brace waited for a writer forever.
  const std::string pipe = fifo("checkpoint.fifo");
  check_refused(cli_run({"-c", pipe, "-k", test::model_path("tok2048.bin"), "-s", "4"}),
                "llama-cli: --checkpoint: " + pipe + ": not a regular file (a FIFO)");
  check_refused(cli_run({"-c", test::model_path("stories1M.bin"), "-k", pipe, "-s", "4"}),
                "llama-cli: --tokenizer: " + pipe + ": not a regular file (a FIFO)");
  check_refused(cli_run({"-k", pipe, "--tokenize", "-p", "x"}),
                "llama-cli: --tokenizer: " + pipe + ": not a regular file (a FIFO)");
  check_refused(cli_run({"-c", "/dev/zero", "-k", test::model_path("tok2048.bin"), "-s", "4"}),
                "llama-cli: --checkpoint: /dev/zero: not a regular file (a character device)");
}

TEST_CASE("llama-template: --template and --messages are bounded regular files", "[reads]") {
  const std::string messages = text_file("messages.json", R"([{"role": "user", "content": "hi"}])");
  const std::string tpl = text_file("t.jinja", "{{ messages[0].content }}");
  // Issue 39: --template /dev/zero rendered an empty template and exited 0.
  check_refused(tmpl({"--template", "/dev/zero", "--messages", messages}),
                "llama-template: --template: /dev/zero: not a regular file (a character device)");
  const std::string dir = a_directory();
  check_refused(tmpl({"--template", dir, "--messages", messages}),
                "llama-template: --template: " + dir + ": not a regular file (a directory)");
  check_refused(tmpl({"--template", tpl, "--messages", "/dev/zero"}),
                "llama-template: --messages: /dev/zero: not a regular file (a character device)");
  const std::string pipe = fifo("messages.fifo");
  check_refused(tmpl({"--template", tpl, "--messages", pipe}),
                "llama-template: --messages: " + pipe + ": not a regular file (a FIFO)");
  const std::string big_template = sparse_file("big-template.jinja", (int64_t{1} << 20) + 1);
  check_refused(tmpl({"--template", big_template, "--messages", messages}),
                "llama-template: --template: " + big_template +
                    ": 1048577 bytes, more than the 1048576 a chat template may have");
  const std::string big_messages = sparse_file("big-messages.json", (int64_t{16} << 20) + 1);
  check_refused(tmpl({"--template", tpl, "--messages", big_messages}),
                "llama-template: --messages: " + big_messages +
                    ": 16777217 bytes, more than the 16777216 a conversation may have");
  const std::string big_config = sparse_file("big-config.json", (int64_t{64} << 20) + 1);
  check_refused(tmpl({"--template", big_config, "--messages", messages}),
                "llama-template: --template: " + big_config +
                    ": 67108865 bytes, more than the 67108864 a tokenizer_config.json may have");
  const Run ok = tmpl({"--template", tpl, "--messages", messages});
  CHECK(ok.code == 0);
  CHECK(ok.out == "hi");
}

TEST_CASE("llama-perplexity -f: a bounded regular file of UTF-8 text", "[reads][perplexity]") {
  const std::vector<std::string> model = {"-c", test::model_path("stories1M.bin"), "-k",
                                          test::model_path("tok2048.bin"), "-f"};
  // Issue 39: a binary file of 60 MB was encoded and run for minutes.
  std::string binary = "Once upon a time";
  binary += std::string(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0",
      10);
  const std::string elf = text_file("binary.bin", binary);
  check_refused(ppl(with(model, elf)),
                "llama-perplexity: --file: " + elf + ": not UTF-8 text (byte 0x00 at offset 23)");
  const std::string latin1 = text_file("latin1.txt", "caf\xe9 au lait");
  check_refused(ppl(with(model, latin1)),
                "llama-perplexity: --file: " + latin1 + ": not UTF-8 text (byte 0xe9 at offset 3)");
  const std::string overlong = text_file("overlong.txt", "a\xc0\xaf");
  check_refused(ppl(with(model, overlong)), "llama-perplexity: --file: " + overlong +
                                                ": not UTF-8 text (byte 0xc0 at offset 1)");
  const std::string cut = text_file("cut.txt", "ab\xe2\x82");
  check_refused(ppl(with(model, cut)),
                "llama-perplexity: --file: " + cut + ": not UTF-8 text (byte 0xe2 at offset 2)");
  check_refused(ppl(with(model, "/dev/zero")),
                "llama-perplexity: --file: /dev/zero: not a regular file (a character device)");
  const std::string dir = a_directory();
  check_refused(ppl(with(model, dir)),
                "llama-perplexity: --file: " + dir + ": not a regular file (a directory)");
  const std::string huge = sparse_file("huge.txt", (int64_t{64} << 20) + 1);
  check_refused(ppl(with(model, huge)),
                "llama-perplexity: --file: " + huge +
                    ": 67108865 bytes, more than the 67108864 a perplexity text may have");
}

TEST_CASE("llama-convert refuses a FIFO as IN or --tokenizer before sniffing it", "[reads]") {
  const std::string pipe = fifo("convert.fifo");
  const std::string out_path = test::temp_path("convert-out.gguf");
  std::ostringstream out, err;
  CHECK(convert::run_convert({pipe, out_path, "--to", "gguf-f32"}, out, err) == 1);
  CHECK(err.str() == "llama-convert: IN: " + pipe + ": not a regular file (a FIFO)\n");
  std::ostringstream out2, err2;
  CHECK(convert::run_convert(
            {test::model_path("stories1M.bin"), out_path, "--to", "gguf-f32", "--tokenizer", pipe},
            out2, err2) == 1);
  CHECK(err2.str() == "llama-convert: --tokenizer: " + pipe + ": not a regular file (a FIFO)\n");
  CHECK_FALSE(std::filesystem::exists(out_path));
}

TEST_CASE("out of memory names the stage it happened in", "[reads][oom]") {
  // The helper: the innermost stage names itself; other errors pass through.
  std::ostringstream err;
  CHECK(cli::run_reporting_errors("app", err, [] {
          return cli::during("reading a.gguf", [] {
            return cli::during("reading b.json", []() -> int { throw std::bad_alloc(); });
          });
        }) == 1);
  CHECK(err.str() == "app: out of memory while reading b.json\n");
  CHECK_THROWS_WITH(cli::during("x", []() -> int { throw Error("y"); }), "y");
  CHECK(cli::during("x", [] { return 7; }) == 7);

  // Through the apps (issue 39: they printed only "out of memory").
  const std::string ckpt = test::model_path("stories1M.bin");
  const std::string tok = test::model_path("tok2048.bin");
  check_refused(cli_run({"-c", ckpt, "-k", tok, "-s", "4", "-b", "test-oom-prepare"}),
                "llama-cli: out of memory while preparing backend test-oom-prepare for " + ckpt);
  check_refused(cli_run({"-c", ckpt, "-k", tok, "-s", "4", "-b", "test-oom-forward"}),
                "llama-cli: out of memory while generating");
  const Run chat = cli_run({"-c", ckpt, "-k", tok, "-s", "4", "-b", "test-oom-forward", "-m",
                            "chat", "--format", "json"},
                           "Hello\n");
  CHECK(chat.code == 1);
  CHECK(chat.err == "llama-cli: out of memory while answering turn 1\n");
  const std::string text = test::model_path("stories1M-val.txt");
  const Run p = ppl({"-c", ckpt, "-k", tok, "-f", text, "-b", "test-oom-forward"});
  CHECK(p.code == 1);
  CHECK(p.err ==
        "llama-perplexity: out of memory while computing the perplexity of " + text + "\n");
}
