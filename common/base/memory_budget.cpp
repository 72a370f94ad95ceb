// Run-state estimate, available memory from /proc, cgroup v2 and rlimits, and the refusal.
#include "llama/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

constexpr int64_t kFloatBytes = 4;

// "21.5 GiB" style figure next to the exact byte count.
std::string human_bytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

// The "MemAvailable:" line of /proc/meminfo in bytes, or -1.
int64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:" && kib >= 0 && kib < std::numeric_limits<int64_t>::max() / 1024) {
      return kib * 1024;
    }
  }
  return -1;
}

int64_t read_int_file(const std::string& path) {
  std::ifstream in(path);
  int64_t v = -1;
  if (!(in >> v) || v < 0) return -1;  // also "max": no limit
  return v;
}

// memory.max - memory.current of this process's cgroup (v2), or -1 without a limit.
int64_t cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    const int64_t max = read_int_file(dir + "/memory.max");
    const int64_t current = read_int_file(dir + "/memory.current");
    if (max < 0 || current < 0) return -1;
    return max > current ? max - current : 0;
  }
  return -1;
}

}  // namespace

int64_t kv_cache_bytes(const Config& c, KvDType kv, int32_t sequences) {
  const int64_t one = checked_mul(c.kv_cache_floats(), kv_element_bytes(kv), "KV cache bytes");
  return checked_mul(one, sequences, "KV cache bytes");
}

int64_t run_state_bytes(const Config& c, KvDType kv, int32_t sequences) {
  const std::string what = "run state bytes";
  int64_t floats = checked_mul(2, c.dim, what);                                          // x, xb2
  floats = checked_add(floats, checked_mul(2, std::max(c.dim, c.q_dim()), what), what);  // xb, q
  floats = checked_add(floats, checked_mul(2, c.hidden_dim, what), what);                // hb, hb2
  floats = checked_add(floats, checked_mul(c.n_heads, c.seq_len, what), what);           // att
  floats = checked_add(floats, c.vocab_size, what);                                      // logits
  return checked_add(checked_mul(floats, kFloatBytes, what), kv_cache_bytes(c, kv, sequences),
                     what);
}

MemoryAvailable available_memory() {
  MemoryAvailable a;
  a.bytes = meminfo_available();
  a.source = "MemAvailable in /proc/meminfo";
  if (a.bytes < 0) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    a.bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
    a.source = "sysconf(_SC_AVPHYS_PAGES)";
  }
  const int64_t cgroup = cgroup_headroom();
  if (cgroup >= 0 && cgroup < a.bytes) {
    a.bytes = cgroup;
    a.source = "cgroup memory.max minus memory.current";
  }
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      as.rlim_cur < static_cast<rlim_t>(a.bytes)) {
    a.bytes = static_cast<int64_t>(as.rlim_cur);
    a.source = "RLIMIT_AS";
  }
  return a;
}

void require_memory(int64_t bytes_needed, const std::string& what, const MemoryAvailable& available,
                    const std::string& source) {
  if (bytes_needed <= available.bytes) return;
  std::ostringstream s;
  s << source << ": " << what << " needs " << bytes_needed << " bytes ("
    << human_bytes(bytes_needed) << ") but only " << available.bytes << " bytes ("
    << human_bytes(available.bytes) << ") are available (" << available.source
    << "); refused before allocating";
  throw Error(s.str());
}

void require_run_state_memory(const Config& c, const std::string& source, KvDType kv,
                              int32_t sequences) {
  const int64_t needed = run_state_bytes(c, kv, sequences);
  std::ostringstream what;
  what << "the run state (KV cache " << to_string(kv) << " [";
  if (sequences > 1) what << "sequences " << sequences << ", ";
  what << "2, n_layers " << c.n_layers << ", seq_len " << c.seq_len << ", kv_dim " << c.kv_dim()
       << "] = " << kv_cache_bytes(c, kv, sequences)
       << " bytes, plus activations, attention scores and logits)";
  require_memory(needed, what.str(), available_memory(), source);
}

}  // namespace llama
