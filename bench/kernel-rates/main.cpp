// llama-kernel-rates: each weight dtype's decode product rate (GB/s of weight
// bytes, on one thread or several sharing the rows) with the matrix in L2 and
// streamed from DRAM, next to a plain streaming read of the streamed matrix's
// buffer on as many threads (the roofline).
// L2 rate below the read rate: the kernel is compute-bound. L2 far above DRAM
// and DRAM below the read rate: the way it reads memory is the limit.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "error_report.hpp"
#include "kernel_rates.hpp"
#include "llama/kernels/dispatch/kernel_set.hpp"
#include "stats.hpp"
#include "usage_error.hpp"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "llama-kernel-rates";

struct Options {
  std::vector<llama::DType> types;
  int64_t cols = 2048;
  llama::KernelSet kernel = llama::KernelSet::portable;
  double seconds = 0.3;
  int repeats = 3;
  int threads = 1;
  int64_t l2_bytes = 256 << 10;
  int64_t dram_bytes = int64_t{512} << 20;
  bool help = false;
  std::string help_text;
};

llama::DType parse_type(const std::string& name) {
  for (int i = 0; i < llama::kDTypeCount; ++i) {
    const auto d = static_cast<llama::DType>(i);
    // f32 runs the backends' own engines and llama2.c's q8_0 keeps its scales apart: neither
    // is a product-table block type read in place.
    if (d != llama::DType::f32 && d != llama::DType::q8_0 && name == llama::to_string(d)) return d;
  }
  throw llama::cli::UsageError("--types: unknown type '" + name + "'");
}

llama::KernelSet parse_kernel(const std::string& name) {
  using llama::KernelSet;
  if (name == "best") return llama::best_kernel_set();
  for (KernelSet k :
       {KernelSet::portable, KernelSet::avx512_vnni, KernelSet::avx2, KernelSet::avx_vnni}) {
    if (name != llama::to_string(k)) continue;
    if (!llama::kernel_set_available(k))
      throw llama::cli::UsageError("--kernel: this CPU has no " + name + " kernels");
    return k;
  }
  throw llama::cli::UsageError("--kernel: unknown kernel set '" + name + "'");
}

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::string types = "block_q8_0,q4_0,q4_1,q5_0,q5_1,q2_k,q3_k,q4_k,q5_k,q6_k,f16,bf16";
  std::string kernel = "best";
  int64_t l2_kib = o.l2_bytes >> 10, dram_mib = o.dram_bytes >> 20;
  po::options_description desc("Usage: llama-kernel-rates [options]\nOptions");
  desc.add_options()("types,t", po::value(&types)->value_name("LIST"),
                     "comma-separated weight dtypes")("cols,c", po::value(&o.cols)->value_name("N"),
                                                      "row length (default 2048)")(
      "kernel,k", po::value(&kernel)->value_name("SET"),
      "best (LLAMA_Q8_KERNEL, LLAMA_CPU_LEVEL apply), portable, avx512-vnni, avx2, avx-vnni")(
      "seconds,s", po::value(&o.seconds)->value_name("S"), "time per repeat (default 0.3)")(
      "repeats,r", po::value(&o.repeats)->value_name("N"), "repeats per rate (default 3)")(
      "threads,j", po::value(&o.threads)->value_name("N"),
      "threads sharing each matrix's rows, started together (default 1)")(
      "l2-kib", po::value(&l2_kib)->value_name("N"), "cache-resident matrix size (default 256)")(
      "dram-mib", po::value(&dram_mib)->value_name("N"), "streamed matrix size (default 512)")(
      "help,h", "show this help");
  o.help_text = llama::cli::help_text(desc);
  const po::variables_map vm = llama::cli::parse_command_line(desc, args);
  if (vm.count("help")) {
    o.help = true;
    return o;
  }
  std::stringstream list(types);
  for (std::string t; std::getline(list, t, ',');) o.types.push_back(parse_type(t));
  if (o.types.empty()) throw llama::cli::UsageError("--types: no type given");
  o.kernel = parse_kernel(kernel);
  if (o.cols <= 0) throw llama::cli::UsageError("--cols: must be positive");
  for (llama::DType d : o.types) {
    const int64_t block = llama::dtype_info(d).block_values;
    if (o.cols % block != 0) {
      throw llama::cli::UsageError("--cols: " + std::to_string(o.cols) + " is not a multiple of " +
                                   llama::to_string(d) + "'s block of " + std::to_string(block));
    }
  }
  if (!(o.seconds >= 0 && o.seconds <= 60))
    throw llama::cli::UsageError("--seconds: must be in [0, 60]");
  if (o.repeats < 1 || o.repeats > 1000)
    throw llama::cli::UsageError("--repeats: must be in [1, 1000]");
  if (o.threads < 1 || o.threads > 256)
    throw llama::cli::UsageError("--threads: must be in [1, 256]");
  if (l2_kib < 1 || l2_kib > (1 << 20))
    throw llama::cli::UsageError("--l2-kib: must be in [1, 1048576]");
  if (dram_mib < 1 || dram_mib > (1 << 16))
    throw llama::cli::UsageError("--dram-mib: must be in [1, 65536]");
  o.l2_bytes = l2_kib << 10;
  o.dram_bytes = dram_mib << 20;
  return o;
}

// "median (min-max)" of the repeats, in GB/s.
std::string spread(const std::vector<double>& v, double& median) {
  const llama::bench::Summary s = llama::bench::summarize(v);
  median = s.median;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f (%.1f-%.1f)", s.median, s.min, s.max);
  return buf;
}

int run(const Options& o) {
  using namespace llama::bench;
  if (o.help) {
    std::cout << o.help_text;
    return 0;
  }
  std::cout << "cols " << o.cols << ", " << o.threads
            << (o.threads == 1 ? " thread" : " threads (GB/s summed over them)") << ", L2 matrix "
            << (o.l2_bytes >> 10) << " KiB a thread, DRAM matrix " << (o.dram_bytes >> 20)
            << " MiB, " << o.repeats << " x " << o.seconds
            << " s of CPU time; GB/s median (min-max)\n";
  std::cout << "type\tkernel\tL2 GB/s\tDRAM GB/s\tread GB/s\tL2/read\tDRAM/read\n";
  for (llama::DType d : o.types) {
    double l2 = 0, dram = 0, read = 0;
    const Rates in_l2 = measure_decode(d, o.cols, o.l2_bytes * o.threads, o.kernel, o.seconds,
                                       o.repeats, o.threads);
    const Rates in_dram =
        measure_decode(d, o.cols, o.dram_bytes, o.kernel, o.seconds, o.repeats, o.threads);
    const std::string l2_text = spread(in_l2.product_gbps, l2);
    const std::string dram_text = spread(in_dram.product_gbps, dram);
    const std::string read_text = spread(in_dram.read_gbps, read);
    char ratios[64];
    std::snprintf(ratios, sizeof ratios, "%.2f\t%.2f", l2 / read, dram / read);
    std::cout << llama::to_string(d) << "\t" << llama::to_string(o.kernel) << "\t" << l2_text
              << "\t" << dram_text << "\t" << read_text << "\t" << ratios << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse({argv + 1, argv + argc});
  } catch (const llama::cli::UsageError& e) {
    return llama::cli::report_usage_error(kProgram, std::cerr, e.what());
  }
  return llama::cli::run_reporting_errors(kProgram, std::cerr, [&] { return run(options); });
}
