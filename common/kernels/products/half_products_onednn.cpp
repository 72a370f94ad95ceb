// The onednn-bf16 batch path (products/half_products.hpp): oneDNN's matmul
// (Debian's libdnnl) for bf16 weights under fast numerics on activations
// rounded to bf16 (round_batch_to_bf16, Bf16Layout::rows) once per batch by
// the backend, or per call by half_matmat_rows' f32 entry (bf16_batch.cpp).
// Products and sums in f32 inside oneDNN's brgemm on AVX512-BF16. oneDNN
// would take AMX-BF16 tiles itself where the CPU has them, but its AMX matmul
// sums in an order that depends on the block's shape (on an Intel Xeon with
// AMX a row block's results changed with the split of the rows, which the
// product table's contract forbids) and is slower than the hand-written
// amx-bf16 path, which such CPUs take instead (x86/half_products_amx.cpp); so
// oneDNN's ISA is capped at avx512_core_bf16 before its first use.
//
// Weights in place: W bf16 [rows, cols] row-major is, as matmul's [K, N]
// weights, the plain strided format "ba" (strides {1, cols}); oneDNN's brgemm
// reads it as is at the speed of its own blocked layout, so there is no
// reordered copy and the mapping stays the only copy of the weights.
//
// Primitives: one per shape (rows of the block, cols, batch, strides), made on
// first use and kept by oneDNN's primitive cache (its own state, 1024 entries
// by default); each call rebuilds the descriptor and takes the primitive from
// the cache (little time beside the product's), so this file holds no state
// beyond the immutable CPU engine.
//
// Threads: Debian's libdnnl runs on OpenMP (libgomp). The backends split rows
// over their own threads (oneTBB) and each block is one call here, so each
// call runs on its calling thread alone: the calling thread's OpenMP team size
// is 1 for the call (omp_set_num_threads, restored after), so oneDNN never
// starts a team beside the backend's threads (and OpenBLAS's, which blas keeps
// to one per call too).
#include <cstring>
#include <dnnl.hpp>
#include <limits>
#include <string>

#include "kernels/products/half_kernels.hpp"
#include "llama/error.hpp"
#include "llama/kernels/products/half_products.hpp"
#include "llama/uninitialized_array.hpp"

// The OpenMP runtime's C API (libgomp, the runtime Debian's oneDNN runs on),
// declared here rather than through <omp.h>: clang ships that header only with
// LLVM's libomp, a different runtime, and this file is built without -fopenmp.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int);
}

namespace llama::detail {
namespace {

using dnnl::memory;
using dt = memory::data_type;

// oneDNN's ISA, capped once at avx512_core_bf16 (see the top of the file)
// before anything queries it. The cap fails (and oneDNN keeps its own choice)
// where the program used oneDNN before us or DNNL_MAX_CPU_ISA set it.
dnnl::cpu_isa effective_isa() {
  static const bool capped = [] {
    try {
      dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx512_core_bf16);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  (void)capped;
  return dnnl::get_effective_cpu_isa();
}

const dnnl::engine& cpu_engine() {
  effective_isa();
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);  // immutable once made
  return engine;
}

// The calling thread's OpenMP team size held at one while in scope.
class OneThread {
 public:
  OneThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(saved_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int saved_;
};

}  // namespace

void matmat_rows_onednn_bf16(float* out, int64_t out_stride, const BlockMatrix& w,
                             const uint16_t* xb, int64_t xld, int64_t n, int64_t row_begin,
                             int64_t row_end) {
  const int64_t cols = w.cols, rows = row_end - row_begin;
  const auto* weights = reinterpret_cast<const uint16_t*>(w.bytes.data()) + row_begin * cols;
  const OneThread one_thread;
  // oneDNN 2.6 runs its brgemm matmul only on a dense destination; a block of
  // a wider output (each thread's rows of a stacked projection) would fall
  // back to its slower gemm:jit. So such a block is made in its own f32
  // [n, rows] buffer and copied out, a small fraction of the product's time.
  // n * rows <= out's size (checked).
  const bool dense = n == 1 || out_stride == rows;
  UninitializedArray<float> block(dense ? 0 : static_cast<size_t>(n * rows));  // f32 [n, rows]
  float* y = dense ? out + row_begin : block.data();
  try {
    const dnnl::engine& eng = cpu_engine();
    const memory::desc src({n, cols}, dt::bf16, memory::dims{xld, 1});      // bf16 [n, cols]
    const memory::desc wei({cols, rows}, dt::bf16, memory::dims{1, cols});  // W^T, in place
    const memory::desc dst({n, rows}, dt::f32, memory::dims{rows, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), eng);
    dnnl::stream stream(eng);
    // oneDNN takes non-const handles; matmul only reads src and weights.
    dnnl::matmul(pd).execute(stream,
                             {{DNNL_ARG_SRC, memory(src, eng, const_cast<uint16_t*>(xb))},
                              {DNNL_ARG_WEIGHTS, memory(wei, eng, const_cast<uint16_t*>(weights))},
                              {DNNL_ARG_DST, memory(dst, eng, y)}});
    stream.wait();
    for (int64_t t = 0; !dense && t < n; ++t) {
      std::memcpy(out + t * out_stride + row_begin, y + t * rows, sizeof(float) * rows);
    }
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN bf16 matmul (") + std::to_string(n) + " x " +
                std::to_string(cols) + " x " + std::to_string(rows) + "): " + e.what());
  }
}

namespace {

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

}  // namespace

bool onednn_bf16_isa() {
  const dnnl::cpu_isa isa = effective_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::string onednn_description() {
  const dnnl_version_t* v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ", ISA " + isa_name(effective_isa());
}

}  // namespace llama::detail
