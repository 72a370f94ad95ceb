// llama-convert IN OUT --to v0|v1|v2|gguf-{f32,f16,q8_0,q4_0}|hf [--group-size N]
// [--tokenizer FILE] [--dtype f32|bf16|f16]: loads any readable checkpoint (a
// llama2.c file, a Hugging Face directory or a llama GGUF file) and writes it as export.py would,
// as GGUF (convert_gguf.cpp) or as a Hugging Face directory, reporting each
// quantized tensor's largest error. The output goes to a temporary file (or
// directory) renamed to OUT only when complete, so a failed run leaves no
// half-written checkpoint.
#include "convert_run.hpp"
#include "convert_gguf.hpp"

#include "backend_flags.hpp"
#include "error_report.hpp"
#include "flag_files.hpp"

#include "usage_message.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>

#include "llama/error.hpp"
#include "llama/formats/gguf_model.hpp"
#include "llama/formats/hf_llama2c.hpp"
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/llama2c_writer.hpp"
#include "llama/tokenizers/llama2c_tokenizer.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace llama::convert {
namespace {

constexpr const char* kProgram = "llama-convert";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string input, output, help;
  WriteOptions write;
  std::optional<gguf::OutType> gguf;               // --to gguf-*
  std::string tokenizer;                           // GGUF, HF: a tokenizer.bin to embed / export
  bool hf = false;                                 // --to hf
  SafetensorsDtype dtype = SafetensorsDtype::F32;  // --to hf --dtype
  bool show_help = false;
  bool show_version = false;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::string to, dtype;
  int64_t group_size = 64;
  po::options_description desc(
      "Usage: llama-convert IN OUT --to v0|v1|v2|gguf-f32|gguf-f16|gguf-q8_0|gguf-q4_0|hf\n"
      "                     [--group-size N] [--tokenizer FILE] [--dtype f32|bf16|f16]\n"
      "Rewrites a llama2.c checkpoint (any version), a Hugging Face directory or a llama\n"
      "GGUF file (its tensors dequantized exactly) in export.py's layout for version 0\n"
      "(legacy f32), 1 (\"ak42\" header, f32) or 2 (\"ak42\" header, Q8_0), as a llama\n"
      "GGUF file with F32, F16, Q8_0 or Q4_0 matrices (llama.cpp's quantizers; a GGUF\n"
      "input's vocabulary is kept unless --tokenizer names another), or (--to hf, from a\n"
      "llama2.c or GGUF file) as a Hugging Face\n"
      "directory OUT: config.json, generation_config.json, model.safetensors and, with a\n"
      "tokenizer.bin, tokenizer.json + tokenizer_config.json. q/k rows are permuted\n"
      "between llama2.c's interleaved pairs and Hugging Face's rotate_half halves.\nOptions");
  desc.add_options()("to", po::value(&to)->value_name("FORMAT"), "output format (required)")(
      "group-size", po::value(&group_size)->value_name("N"),
      "v2: values per scale (default 64); halved until it divides dim and hidden_dim")(
      "tokenizer,k", po::value(&o.tokenizer)->value_name("FILE"),
      "gguf-*: a tokenizer.bin to embed as the file's vocabulary; hf: a tokenizer.bin to "
      "export as tokenizer.json (default: tokenizer.bin beside IN, if there is one)")(
      "dtype", po::value(&dtype)->value_name("TYPE"),
      "hf: the weights' dtype, f32 (default), bf16 or f16 (rounded to nearest even)")(
      "version", "print the version and exit")("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("input", po::value(&o.input))("output", po::value(&o.output));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("input", 1).add("output", 1);
  std::ostringstream help;
  help << desc;
  o.help = help.str();

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(cli::usage_message(e, args));
  }
  if (vm.count("help") || vm.count("version")) {
    o.show_help = vm.count("help") > 0;
    o.show_version = !o.show_help;
    return o;
  }
  if (o.input.empty() || o.output.empty()) throw UsageError("IN and OUT are required");
  if (to == "v0")
    o.write.format = CheckpointFormat::v0;
  else if (to == "v1")
    o.write.format = CheckpointFormat::v1;
  else if (to == "v2")
    o.write.format = CheckpointFormat::v2;
  else if (to == "gguf-f32")
    o.gguf = gguf::OutType::f32;
  else if (to == "gguf-f16")
    o.gguf = gguf::OutType::f16;
  else if (to == "gguf-q8_0")
    o.gguf = gguf::OutType::q8_0;
  else if (to == "gguf-q4_0")
    o.gguf = gguf::OutType::q4_0;
  else if (to == "hf")
    o.hf = true;
  else
    throw UsageError(
        "--to: must be v0, v1, v2, gguf-f32, gguf-f16, gguf-q8_0, gguf-q4_0 or hf, got '" + to +
        "'");
  if (vm.count("tokenizer") && !o.gguf && !o.hf)
    throw UsageError("--tokenizer: only applies to --to gguf-* and --to hf");
  if (vm.count("dtype")) {
    if (!o.hf) throw UsageError("--dtype: only applies to --to hf");
    if (dtype == "f32")
      o.dtype = SafetensorsDtype::F32;
    else if (dtype == "bf16")
      o.dtype = SafetensorsDtype::BF16;
    else if (dtype == "f16")
      o.dtype = SafetensorsDtype::F16;
    else
      throw UsageError("--dtype: must be f32, bf16 or f16, got '" + dtype + "'");
  }
  if (vm.count("group-size") && o.write.format != CheckpointFormat::v2) {
    throw UsageError("--group-size: only applies to --to v2");
  }
  if (group_size <= 0 || group_size > (int64_t{1} << 30)) {
    throw UsageError("--group-size: must be in [1, 2^30], got " + std::to_string(group_size));
  }
  o.write.group_size = group_size;
  return o;
}

// A llama2.c file as is; a Hugging Face directory or a GGUF file as export.py's
// version 1, with a GGUF's vocabulary in `vocabulary`.
Checkpoint open_input(const Options& o, std::optional<gguf::Vocabulary>& vocabulary) {
  if (looks_like_hf_checkpoint(o.input)) return hf_to_llama2c(open_hf_model(o.input), o.output);
  if (gguf::is_gguf(o.input)) {
    const gguf::File f = gguf::File::open(o.input);
    vocabulary = gguf::read_vocabulary(f);
    return model_to_llama2c(gguf::to_model(f), o.output);
  }
  return Checkpoint::open(o.input);
}

// What IN was, for the report line: "GGUF", or the llama2.c version read.
std::string input_kind(const Options& o, const Checkpoint& in) {
  return gguf::is_gguf(o.input) ? "GGUF" : to_string(in.format());
}

// --to hf: a directory written beside OUT, renamed to OUT when complete.
int convert_to_hf(const Options& o, const Checkpoint& in, std::ostream& out) {
  std::error_code ec;
  if (fs::exists(o.output, ec)) throw Error(o.output + ": exists; write to a new directory");
  std::string tokenizer_path = o.tokenizer;
  if (tokenizer_path.empty()) {
    const fs::path beside = fs::path(o.input).parent_path() / "tokenizer.bin";
    if (fs::exists(beside, ec)) tokenizer_path = beside.string();
  }
  std::optional<Llama2cTokenizer> tok;
  if (!tokenizer_path.empty()) tok.emplace(tokenizer_path, in.config().vocab_size);
  const std::string partial = o.output + ".partial";
  fs::remove_all(partial, ec);
  HfDirectoryReport report;
  try {
    if (!fs::create_directory(partial, ec)) {
      throw Error(partial + ": cannot create the directory: " + ec.message());
    }
    report = write_hf_directory(in, tok ? &*tok : nullptr, o.dtype, partial);
    fs::rename(partial, o.output);
  } catch (...) {
    fs::remove_all(partial, ec);
    throw;
  }
  out << o.input << " (" << input_kind(o, in) << ") -> " << o.output << " (Hugging Face "
      << to_string(o.dtype) << (tok ? ", tokenizer.json from " + tokenizer_path : ", no tokenizer")
      << "), " << report.bytes << " bytes\n";
  for (const std::string& f : report.files) out << "  " << fs::path(f).filename().string() << "\n";
  return 0;
}

int convert(const Options& o, std::ostream& out) {
  std::error_code ec;
  if (fs::exists(o.output, ec) && fs::equivalent(o.input, o.output, ec)) {
    throw Error(o.output + ": is the input file; write to another path");
  }
  if (o.hf && looks_like_hf_checkpoint(o.input)) {
    throw Error(o.input +
                ": is a Hugging Face checkpoint already; --to hf reads llama2.c and GGUF files");
  }
  // Before any reader sniffs them (the GGUF magic check would wait on a FIFO).
  cli::require_file_or_directory("IN", o.input);
  cli::require_file_or_directory("--tokenizer", o.tokenizer);
  // Each stage names itself should memory run out in it (error_report.hpp).
  std::optional<gguf::Vocabulary> vocabulary;  // a GGUF input's
  const Checkpoint in =
      cli::during("reading " + o.input, [&] { return open_input(o, vocabulary); });
  if (o.hf) {
    return cli::during("writing " + o.output, [&] { return convert_to_hf(o, in, out); });
  }
  if (!o.tokenizer.empty()) vocabulary.reset();  // --tokenizer replaces it
  // Beside OUT so that the rename stays on one file system.
  const std::string partial = o.output + ".partial";
  WriteReport report;
  gguf::LlamaWriteReport gguf_report;
  try {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file) throw Error(partial + ": cannot create: " + std::strerror(errno));
    cli::during("writing " + o.output, [&] {
      if (o.gguf) {
        gguf_report = write_gguf(in, o.tokenizer, vocabulary, *o.gguf, file, partial);
      } else {
        report = write_checkpoint(in, o.write, file, partial);
      }
    });
    file.close();
    if (!file) throw Error(partial + ": write failed");
    fs::rename(partial, o.output);
  } catch (...) {
    fs::remove(partial, ec);
    throw;
  }
  if (o.gguf) {
    out << o.input << " (" << input_kind(o, in) << ") -> " << o.output << " (GGUF "
        << to_string(*o.gguf)
        << (!o.tokenizer.empty() ? ", vocabulary of " + o.tokenizer
            : vocabulary         ? ", vocabulary of " + o.input
                                 : std::string(", no vocabulary"))
        << "), " << gguf_report.bytes << " bytes\n";
    float worst = 0;
    for (const gguf::WrittenTensor& t : gguf_report.tensors) {
      if (t.type == "F32") continue;
      out << "  " << std::left << std::setw(26) << t.name << std::setw(6) << t.type << "max error "
          << t.max_error << "\n";
      worst = std::max(worst, t.max_error);
    }
    if (*o.gguf != gguf::OutType::f32) out << "max error across all weights: " << worst << "\n";
    return 0;
  }
  for (const std::string& line : report.backoffs) out << line << "\n";
  out << o.input << " (" << input_kind(o, in) << ") -> " << o.output << " ("
      << to_string(o.write.format);
  if (o.write.format == CheckpointFormat::v2) out << ", group size " << report.group_size;
  out << "), " << report.bytes << " bytes\n";
  float worst = 0;
  for (const TensorQuantization& q : report.quantized) {
    out << "  " << std::left << std::setw(16) << q.name;
    if (q.copied) {
      out << "kept as is (already Q8_0 with this group size)\n";
    } else {
      out << "max quantization error " << q.max_error << "\n";
    }
    worst = std::max(worst, q.max_error);
  }
  if (!report.quantized.empty())
    out << "max quantization error across all weights: " << worst << "\n";
  return 0;
}

}  // namespace

int run_convert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options options;
  try {
    options = parse(args);
  } catch (const UsageError& e) {
    return cli::report_usage_error(kProgram, err, e.what());
  }
  if (options.show_help) {
    out << options.help;
    return 0;
  }
  if (options.show_version) {
    out << cli::version_line(kProgram) << "\n";
    return 0;
  }
  return cli::run_reporting_errors(kProgram, err, [&] { return convert(options, out); });
}

}  // namespace llama::convert
