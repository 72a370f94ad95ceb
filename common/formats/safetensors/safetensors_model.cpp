// SafetensorsModel: one file, or the shards of model.safetensors.index.json,
// each checked against the index (every listed shard present, every listed
// tensor in the shard the index names, no tensor unlisted or in two shards).
#include <algorithm>
#include <filesystem>
#include <map>

#include "../json/strict_json.hpp"
#include "llama/error.hpp"
#include "llama/formats/safetensors.hpp"

namespace llama {
namespace {

// Real indexes are tens of KB (Llama 3.1 405B: 1,137 entries, about 100 KB); the
// parsed index takes ~14 bytes of memory per byte of file (a 64 MiB one took 900 MB
// and seconds before its first absent shard was named; 4 MiB, 4 s and 190 MB under
// ASan). 1 MiB holds 12,000 entries, 1,300 layers of a llama model.
constexpr int64_t kMaxIndexBytes = 1 << 20;

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// A shard must be a plain file name beside the index, not a path elsewhere.
void check_shard_name(const std::string& shard, const std::string& tensor,
                      const std::string& source) {
  if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos ||
      shard.find('\0') != std::string::npos) {
    throw Error(source + ": weight_map: tensor \"" + tensor + "\" names shard \"" + shard +
                "\", which is not a file name in the index's directory");
  }
}

}  // namespace

SafetensorsModel SafetensorsModel::open(const std::string& path) {
  SafetensorsModel model;
  model.source_ = path;
  if (!ends_with(path, ".json")) {
    model.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(path)));
    model.index_entries();
    return model;
  }
  const nlohmann::json index = parse_strict_json(read_text_file(path, kMaxIndexBytes), path);
  if (!index.is_object()) throw Error(path + ": must be a JSON object, not " + json_kind(index));
  const auto map = index.find("weight_map");
  if (map == index.end()) throw Error(path + ": has no \"weight_map\"");
  if (!map->is_object()) {
    throw Error(path + ": \"weight_map\" must be an object, not " + json_kind(*map));
  }
  if (map->empty()) throw Error(path + ": \"weight_map\" lists no tensors");
  // shard file name -> the tensors the index puts there
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto& [tensor, shard] : map->items()) {
    if (!shard.is_string()) {
      throw Error(path + ": weight_map: tensor \"" + tensor + "\" maps to " + json_kind(shard) +
                  ", not a shard file name");
    }
    check_shard_name(shard.get<std::string>(), tensor, path);
    shards[shard.get<std::string>()].push_back(tensor);
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const auto& [shard, tensors] : shards) {
    const std::string shard_path = (dir / shard).string();
    std::error_code ec;
    if (!std::filesystem::exists(shard_path, ec)) {
      throw Error(
          path + ": shard \"" + shard + "\" (holding \"" + tensors.front() + "\"" +
          (tensors.size() > 1 ? " and " + std::to_string(tensors.size() - 1) + " more" : "") +
          ") is absent: no file " + shard_path);
    }
    auto file = std::make_unique<SafetensorsFile>(SafetensorsFile::open(shard_path));
    for (const std::string& t : tensors) {
      if (file->find(t) == nullptr) {
        throw Error(path + ": tensor \"" + t + "\" is listed in shard \"" + shard +
                    "\" but is not in its header");
      }
    }
    for (const SafetensorsTensor& t : file->tensors()) {  // `tensors` is sorted (a JSON object)
      if (std::binary_search(tensors.begin(), tensors.end(), t.name)) continue;
      const auto listed = map->find(t.name);
      throw Error(shard_path + ": tensor \"" + t.name + "\" is " +
                  (listed == map->end() ? "not in the index " + path
                                        : "listed in " + path + " under shard " + listed->dump()));
    }
    model.files_.push_back(std::move(file));
  }
  model.index_entries();
  return model;
}

SafetensorsModel SafetensorsModel::from_file(SafetensorsFile file) {
  SafetensorsModel model;
  model.source_ = file.source();
  model.files_.push_back(std::make_unique<SafetensorsFile>(std::move(file)));
  model.index_entries();
  return model;
}

void SafetensorsModel::index_entries() {
  entries_.clear();
  for (const auto& file : files_) {
    for (const SafetensorsTensor& t : file->tensors()) entries_.push_back({&t, file.get()});
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.tensor->name < b.tensor->name; });
  for (size_t i = 1; i < entries_.size(); ++i) {
    if (entries_[i].tensor->name == entries_[i - 1].tensor->name) {
      throw Error(source_ + ": duplicate tensor \"" + entries_[i].tensor->name + "\" in " +
                  entries_[i - 1].file->source() + " and " + entries_[i].file->source());
    }
  }
}

SafetensorsModel::Entry SafetensorsModel::find(std::string_view name) const {
  const auto it =
      std::lower_bound(entries_.begin(), entries_.end(), name,
                       [](const Entry& e, std::string_view n) { return e.tensor->name < n; });
  if (it == entries_.end() || it->tensor->name != name) return {nullptr, nullptr};
  return *it;
}

}  // namespace llama
