// write_safetensors: header JSON (metadata first, then tensors in data order),
// space padding to an 8-byte boundary, then the data.
#include "llama/formats/safetensors_writer.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "llama/checked_math.hpp"
#include "llama/error.hpp"

namespace llama {

void write_safetensors(std::ostream& out, std::span<const SafetensorsOutput> tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata,
                       const std::string& destination) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    auto& m = header["__metadata__"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
  }
  std::set<std::string> names;
  int64_t offset = 0;
  for (const SafetensorsOutput& t : tensors) {
    const std::string what = destination + ": tensor \"" + t.name + "\"";
    if (t.name == "__metadata__" || !names.insert(t.name).second) {
      throw Error(what + ": the name is taken");
    }
    int64_t count = 1;
    for (int64_t d : t.shape) count = checked_mul(count, d, what);
    const int64_t bytes = checked_mul(count, element_bytes(t.dtype), what);
    if (bytes != static_cast<int64_t>(t.bytes.size())) {
      throw Error(what + ": " + std::to_string(t.bytes.size()) + " bytes for " +
                  to_string(t.dtype) + " x " + std::to_string(count) + " elements (" +
                  std::to_string(bytes) + ")");
    }
    header[t.name] = {{"dtype", to_string(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset = checked_add(offset, bytes, what);
  }
  std::string json = header.dump();
  json.append((8 - (8 + json.size()) % 8) % 8, ' ');
  const uint64_t n = json.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(json.data(), static_cast<std::streamsize>(json.size()));
  for (const SafetensorsOutput& t : tensors) {
    out.write(reinterpret_cast<const char*>(t.bytes.data()),
              static_cast<std::streamsize>(t.bytes.size()));
  }
  if (!out) throw Error(destination + ": write failed");
}

}  // namespace llama
