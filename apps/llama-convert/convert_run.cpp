// llama-convert IN OUT --to v0|v1|v2|gguf-{f32,f16,q8_0,q4_0} [--group-size N]
// [--tokenizer FILE]: loads any readable checkpoint and writes it as export.py
// would, or as GGUF (convert_gguf.cpp), reporting each quantized tensor's
// largest error. The output goes to a temporary file renamed over OUT
// only when complete, so a failed run leaves no half-written checkpoint.
#include "convert_run.hpp"
#include "convert_gguf.hpp"

#include "backend_flags.hpp"
#include "error_report.hpp"

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
#include "llama/formats/llama2c_checkpoint.hpp"
#include "llama/formats/llama2c_writer.hpp"

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
  std::optional<gguf::OutType> gguf;  // --to gguf-*
  std::string tokenizer;              // GGUF: a tokenizer.bin to embed
  bool show_help = false;
  bool show_version = false;
};

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::string to;
  int64_t group_size = 64;
  po::options_description desc(
      "Usage: llama-convert IN OUT --to v0|v1|v2|gguf-f32|gguf-f16|gguf-q8_0|gguf-q4_0\n"
      "                     [--group-size N] [--tokenizer FILE]\n"
      "Rewrites a llama2.c checkpoint (any version) in export.py's layout for version\n"
      "0 (legacy f32), 1 (\"ak42\" header, f32) or 2 (\"ak42\" header, Q8_0), or as a\n"
      "llama GGUF file with F32, F16, Q8_0 or Q4_0 matrices (llama.cpp's quantizers).\nOptions");
  desc.add_options()("to", po::value(&to)->value_name("FORMAT"), "output format (required)")(
      "group-size", po::value(&group_size)->value_name("N"),
      "v2: values per scale (default 64); halved until it divides dim and hidden_dim")(
      "tokenizer,k", po::value(&o.tokenizer)->value_name("FILE"),
      "gguf-*: a tokenizer.bin to embed as the file's vocabulary")(
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
  else
    throw UsageError("--to: must be v0, v1, v2, gguf-f32, gguf-f16, gguf-q8_0 or gguf-q4_0, got '" +
                     to + "'");
  if (vm.count("tokenizer") && !o.gguf)
    throw UsageError("--tokenizer: only applies to --to gguf-*");
  if (vm.count("group-size") && o.write.format != CheckpointFormat::v2) {
    throw UsageError("--group-size: only applies to --to v2");
  }
  if (group_size <= 0 || group_size > (int64_t{1} << 30)) {
    throw UsageError("--group-size: must be in [1, 2^30], got " + std::to_string(group_size));
  }
  o.write.group_size = group_size;
  return o;
}

int convert(const Options& o, std::ostream& out) {
  std::error_code ec;
  if (fs::exists(o.output, ec) && fs::equivalent(o.input, o.output, ec)) {
    throw Error(o.output + ": is the input file; write to another path");
  }
  const Checkpoint in = Checkpoint::open(o.input);
  // Beside OUT so that the rename stays on one file system.
  const std::string partial = o.output + ".partial";
  WriteReport report;
  gguf::LlamaWriteReport gguf_report;
  try {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file) throw Error(partial + ": cannot create: " + std::strerror(errno));
    if (o.gguf) {
      gguf_report = write_gguf(in, o.tokenizer, *o.gguf, file, partial);
    } else {
      report = write_checkpoint(in, o.write, file, partial);
    }
    file.close();
    if (!file) throw Error(partial + ": write failed");
    fs::rename(partial, o.output);
  } catch (...) {
    fs::remove(partial, ec);
    throw;
  }
  if (o.gguf) {
    out << o.input << " (" << to_string(in.format()) << ") -> " << o.output << " (GGUF "
        << to_string(*o.gguf)
        << (o.tokenizer.empty() ? ", no vocabulary" : ", vocabulary of " + o.tokenizer) << "), "
        << gguf_report.bytes << " bytes\n";
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
  out << o.input << " (" << to_string(in.format()) << ") -> " << o.output << " ("
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
