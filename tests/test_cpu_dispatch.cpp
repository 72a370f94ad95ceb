// Runtime CPU dispatch: feature detection against the tests' own reading of
// cpuid, XCR0, the kernel's xfeature masks and /proc/cpuinfo (cpu_witness.hpp),
// every SimdLevel's kernels against the portable ones over odd sizes, and
// whole models at every level through llama-cli
// (LLAMA_CPU_LEVEL). Each test prints which levels ran and which this CPU
// lacks: a level the CPU lacks is reported, never counted as passed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "cpu_witness.hpp"
#include "graph/kernels.hpp"
#include "llama/kernels/dispatch/cpu_features.hpp"
#include "llama/kernels/products/gemm_f32.hpp"
#include "llama/kernels/steps/run_c.hpp"
#include "llama/kernels/products/llama2c_int8.hpp"
#include "llama/kernels/steps/runq_c.hpp"
#include "test_support.hpp"

using namespace llama;
using llama::test::runnable_levels;

namespace {

// Prints one line of the feature tests' reasoning (shown with the test's output).
void say(const std::string& line) { std::cout << "cpu features: " << line << "\n"; }

}  // namespace

TEST_CASE("cpu features: each extension as cpuid and XCR0 read here say", "[cpu]") {
  const CpuFeatures& f = cpu_features();  // first, so the AMX permission request is made
  std::cout << describe_cpu() << "\n";
  CHECK(simd_level_supported(SimdLevel::portable));
  CHECK(runnable_level(simd_level()) == simd_level());
  CHECK(simd_level_supported(simd_level()));
#if defined(__x86_64__)
  CHECK(!f.vendor.empty());
  const auto listed = f.list();
  const auto& flags = test::cpuid_flags();
  REQUIRE(listed.size() == flags.size());
  for (size_t i = 0; i < flags.size(); ++i) {
    const test::FlagWitness w = test::witness(flags[i]);
    INFO(flags[i].name << ": " << flags[i].where() << (w.cpuid ? " set" : " clear")
                       << ", XCR0 state " << (w.state ? "on" : "off")
                       << (flags[i].amx ? (w.permitted ? ", tile data permitted"
                                                       : ", tile data not permitted")
                                        : ""));
    CHECK(listed[i].first == flags[i].name);
    CHECK(listed[i].second == w.usable());
  }
  INFO("x86-64-v3 by cpuid and XCR0 read here: " << test::witness_x86_64_v3() << ", LZCNT "
                                                 << test::witness_lzcnt());
  CHECK(simd_level_supported(SimdLevel::avx2) == test::witness_x86_64_v3());
  CHECK(simd_level_supported(SimdLevel::avx512) == test::witness_x86_64_v4());
#else
  say("not an x86-64 machine; only the portable level is checked");
#endif
}

TEST_CASE("cpu features: XCR0 agrees with the kernel's xfeature masks", "[cpu]") {
#if defined(__x86_64__) && defined(__linux__)
  cpu_features();
  const uint64_t xcr0 = test::read_xcr0();
  const auto supported = test::kernel_xfeatures_supported();
  if (!supported) {
    // arch_prctl(ARCH_GET_XCOMP_SUPP) came with Linux 5.16; older kernels have no
    // other interface that states the enabled components.
    say("the kernel does not answer ARCH_GET_XCOMP_SUPP (Linux before 5.16): XCR0 " +
        std::to_string(xcr0) + " is checked against cpuid and /proc/cpuinfo only");
    CHECK((xcr0 & 0x3) == 0x3);  // x87 and SSE state are always on under Linux
    return;
  }
  // The components the kernels' registers live in: SSE, AVX, opmask, ZMM, tiles.
  constexpr uint64_t kUsed = 0x2 | 0x4 | 0xe0 | 0x60000;
  INFO("XCR0 " << std::hex << xcr0 << ", kernel supports " << *supported);
  CHECK((xcr0 & kUsed) == (*supported & kUsed));
#else
  say("not x86-64 Linux: no XCR0 to compare");
  CHECK_FALSE(simd_level_supported(SimdLevel::avx2));
#endif
}

TEST_CASE("cpu features: every extension /proc/cpuinfo lists is found", "[cpu]") {
#if defined(__x86_64__) && defined(__linux__)
  const CpuFeatures& f = cpu_features();
  const auto cpuinfo = test::cpuinfo_flags();
  REQUIRE(!cpuinfo.empty());
  // Linux lists a flag only when the CPU reports it and the kernel enabled its
  // state, so a listed flag must be usable (but for AMX tile data, which each
  // process must be granted). Hypervisors and kernels may leave flags out (one
  // seen here: a KVM guest whose kernel lists no "abm" while cpuid has LZCNT),
  // so an unlisted flag is reported with cpuid's word for it and checked there.
  const auto listed = f.list();
  const auto& flags = test::cpuid_flags();
  REQUIRE(listed.size() == flags.size());
  for (size_t i = 0; i < flags.size(); ++i) {
    const test::CpuidFlag& flag = flags[i];
    const test::FlagWitness w = test::witness(flag);
    const bool in_cpuinfo = cpuinfo.count(flag.cpuinfo) == 1;
    INFO(flag.name << " (/proc/cpuinfo \"" << flag.cpuinfo << "\" " << (in_cpuinfo ? "" : "not ")
                   << "listed, " << flag.where() << (w.cpuid ? " set" : " clear") << ")");
    if (in_cpuinfo && flag.amx && !w.permitted) {
      say(std::string(flag.name) + ": listed, but the kernel did not grant this process tile data");
      CHECK_FALSE(listed[i].second);
    } else if (in_cpuinfo) {
      CHECK(listed[i].second);
    } else if (listed[i].second) {
      say(std::string(flag.name) + ": not in /proc/cpuinfo, but " + flag.where() +
          " is set and XCR0 enables its state: the kernel or hypervisor leaves it out");
      CHECK(w.usable());
    }
  }
  if (simd_level_supported(SimdLevel::avx2) && cpuinfo.count("abm") == 0 &&
      cpuinfo.count("lzcnt") == 0) {
    say("LZCNT: /proc/cpuinfo lists neither abm nor lzcnt; cpuid 80000001.0 ecx bit 5 says " +
        std::string(test::witness_lzcnt() ? "set" : "clear"));
    CHECK(test::witness_lzcnt());
  }
#else
  say("not x86-64 Linux: no /proc/cpuinfo flags to compare");
  CHECK_FALSE(simd_level_supported(SimdLevel::avx2));
#endif
}

TEST_CASE("graph decode product: every level gives the portable kernel's bits", "[cpu][graph]") {
  const auto levels = runnable_levels("graph matvec_rows");
  for (int64_t cols : {1, 7, 8, 9, 31, 64, 100, 288}) {
    for (int64_t rows : {1, 5, 8, 13, 70}) {
      const auto w = test::random_floats(static_cast<size_t>(rows * cols),
                                         1u + static_cast<uint32_t>(cols), 1.0f);
      const auto x =
          test::random_floats(static_cast<size_t>(cols), 7u + static_cast<uint32_t>(rows), 1.0f);
      const auto res = test::random_floats(static_cast<size_t>(rows), 3u, 1.0f);
      std::vector<float> want(static_cast<size_t>(rows));
      graph::matvec_rows(SimdLevel::portable, want.data(), w.data(), x.data(), cols, 0, rows,
                         res.data());
      for (SimdLevel l : levels) {
        INFO(to_string(l) << " rows " << rows << " cols " << cols);
        std::vector<float> got(static_cast<size_t>(rows));
        graph::matvec_rows(l, got.data(), w.data(), x.data(), cols, 0, rows, res.data());
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("f32 GEMM: avx2 = avx512 bit for bit, portable within 1e-6", "[cpu][gemm]") {
  const auto levels = runnable_levels("gemm_f32_rows");
  // Rows off the 6- and 4-row tiles, tokens off the 8-token vectors, the
  // 16-token slices and the 64-token groups.
  for (int64_t cols : {1, 17, 100, 385}) {
    for (int64_t rows : {1, 5, 7, 47, 49, 100}) {
      for (int64_t tokens : {1, 3, 8, 9, 15, 17, 33, 70}) {
        const auto w = test::random_floats(static_cast<size_t>(rows * cols), 11u, 1.0f);
        const auto x = test::random_floats(static_cast<size_t>(tokens * cols), 13u, 1.0f);
        const auto res = test::random_floats(static_cast<size_t>(tokens * rows), 17u, 1.0f);
        std::vector<std::vector<float>> out;
        for (SimdLevel l : levels) {
          std::vector<float> y(static_cast<size_t>(tokens * rows));
          gemm_f32_rows(l, y.data(), rows, w.data(), x.data(), cols, cols, tokens, 0, rows,
                        res.data(), rows);
          out.push_back(std::move(y));
        }
        for (size_t i = 1; i < levels.size(); ++i) {
          INFO(to_string(levels[i])
               << " rows " << rows << " cols " << cols << " tokens " << tokens);
          if (levels[i - 1] != SimdLevel::portable) {
            CHECK(out[i] == out[i - 1]);
            continue;
          }
          // Against portable: each sum within 1e-6 of the sum of |terms|.
          for (int64_t t = 0; t < tokens; ++t) {
            for (int64_t r = 0; r < rows; ++r) {
              double mag = std::fabs(res[static_cast<size_t>(t * rows + r)]);
              for (int64_t k = 0; k < cols; ++k) {
                mag += std::fabs(double(w[static_cast<size_t>(r * cols + k)]) *
                                 x[static_cast<size_t>(t * cols + k)]);
              }
              const size_t at = static_cast<size_t>(t * rows + r);
              REQUIRE(std::fabs(double(out[i][at]) - out[0][at]) <= 1e-6 * mag);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("int8 activation quantization and runq.c attention: every level, the same bits",
          "[cpu][q8]") {
  const auto levels = runnable_levels("quantize_activations, q8::attend_head");
  for (int64_t gs : {16, 32, 64}) {
    const auto x =
        test::random_floats(static_cast<size_t>(gs * 7), static_cast<uint32_t>(gs), 1.0f);
    std::vector<int8_t> want_v(x.size()), got_v(x.size());
    std::vector<float> want_s(7), got_s(7);
    quantize_activations(x, want_v, want_s, gs, SimdLevel::portable);
    for (SimdLevel l : levels) {
      INFO(to_string(l) << " group size " << gs);
      quantize_activations(x, got_v, got_s, gs, l);
      CHECK(got_v == want_v);
      CHECK(got_s == want_s);
    }
  }
  for (int64_t hs : {8, 48, 64}) {
    for (int64_t n_pos : {1, 2, 37, 130}) {
      const int64_t stride = 3 * hs;
      const auto q = test::random_floats(static_cast<size_t>(hs), 5u, 1.0f);
      const auto keys = test::random_floats(static_cast<size_t>(n_pos * stride), 6u, 1.0f);
      const auto values = test::random_floats(static_cast<size_t>(n_pos * stride), 8u, 1.0f);
      std::vector<float> scores(static_cast<size_t>(n_pos)), want(static_cast<size_t>(hs));
      q8::attend_head_at_level(SimdLevel::portable, q, keys.data(), values.data(), stride, n_pos,
                               scores, want);
      for (SimdLevel l : levels) {
        INFO(to_string(l) << " head size " << hs << " positions " << n_pos);
        std::vector<float> got(static_cast<size_t>(hs));
        q8::attend_head_at_level(l, q, keys.data(), values.data(), stride, n_pos, scores, got);
        CHECK(got == want);
        // The f32 path's attention: doubles summed in another vector width.
        std::vector<float> f_want(static_cast<size_t>(hs)), f_got(static_cast<size_t>(hs));
        attend_head_at_level(SimdLevel::portable, q, keys.data(), values.data(), stride, n_pos,
                             scores, f_want);
        attend_head_at_level(l, q, keys.data(), values.data(), stride, n_pos, scores, f_got);
        for (size_t i = 0; i < f_got.size(); ++i) {
          CHECK(std::fabs(f_got[i] - f_want[i]) <= 1e-6f * (1.0f + std::fabs(f_want[i])));
        }
      }
    }
  }
}

TEST_CASE("every parity case at every level the CPU runs, through llama-cli", "[cpu][parity]") {
  const auto levels = runnable_levels("llama-cli LLAMA_CPU_LEVEL");
  auto cases = test::load_json(test::reference_path("parity.json"));
  for (const auto& c : test::load_json(test::reference_path("parity-q8.json"))) cases.push_back(c);
  for (SimdLevel l : levels) {
    const test::ScopedEnv level("LLAMA_CPU_LEVEL", to_string(l));
    for (const char* backend : {"blas", "graph"}) {
      for (const auto& c : cases) {
        INFO(to_string(l) << " " << backend << " " << c["name"].get<std::string>());
        const auto r = test::run_llama_cli_case(c, {"-b", backend, "-j", "2"});
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(test::json_stream(j) == c["stream"].get<std::vector<int32_t>>());
      }
    }
    const auto v = test::run_llama_cli({"--version"});
    CHECK(v.out.find(std::string("simd level: ") + to_string(l)) != std::string::npos);
  }
}
