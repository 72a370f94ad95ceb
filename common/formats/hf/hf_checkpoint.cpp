// HfCheckpoint::open: find the files, read both configs, map the safetensors,
// then bind and check every tensor LlamaForCausalLM needs.
#include "llama/formats/hf_checkpoint.hpp"

#include <algorithm>
#include <filesystem>

#include "../json/strict_json.hpp"
#include "llama/error.hpp"

namespace llama {
namespace {

namespace fs = std::filesystem;
// config.json and generation_config.json: real ones are a few KB. Parsed, JSON takes up
// to ~20 bytes per byte (`"k":{},`): a 16 MiB config of empty objects took 250 MB.
constexpr int64_t kMaxConfigBytes = 1 << 20;
constexpr int64_t kLayerTensors = 9;      // q k v o gate up down and two norms
constexpr int64_t kUnlayeredTensors = 2;  // embed_tokens and the final norm (lm_head if untied)

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Why a directory without safetensors cannot be read, naming what it holds.
std::string no_safetensors(const fs::path& dir) {
  std::error_code ec;
  std::string other;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (ends_with(name, ".safetensors")) {
      return "holds " + name +
             " but neither model.safetensors nor model.safetensors.index.json; "
             "pass the file itself with -c";
    }
    if (name == "pytorch_model.bin" || name == "pytorch_model.bin.index.json") {
      other =
          "PyTorch pickle weights (" + name + "), which are not read; convert them to safetensors";
    } else if (ends_with(name, ".pth") && other.empty()) {
      other = "PyTorch weights (" + name + "), which are not read; convert them to safetensors";
    } else if (ends_with(name, ".gguf") && other.empty()) {
      other = "a GGUF file (" + name + "); pass it with -c instead";
    }
  }
  return "no model.safetensors or model.safetensors.index.json" +
         (other.empty() ? "" : ": it holds " + other);
}

std::string optional_file(const fs::path& p) { return is_file(p) ? p.string() : std::string(); }

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// config.json's sizes are only as large as the tensors let them be: listing the
// tensors of num_hidden_layers 2^31 - 1 (9 names and shapes per layer) would take
// hundreds of GB before the first one was found missing. Every layer has 9 tensors
// and the model two more (embedding, final norm), so a layer count the files
// cannot hold is refused before anything is allocated for it. Widths and vocab_size
// need no such check: each spec's shape is compared with the tensor's, and nothing
// is sized from them before.
void check_layer_count(const HfConfig& c, const SafetensorsModel& st, const std::string& config) {
  const auto tensors = static_cast<int64_t>(st.entries().size());
  const int64_t room =
      tensors < kUnlayeredTensors ? 0 : (tensors - kUnlayeredTensors) / kLayerTensors;
  if (c.num_hidden_layers > room) {
    throw Error(config + ": \"num_hidden_layers\" is " + std::to_string(c.num_hidden_layers) +
                " but " + st.source() + " holds " + std::to_string(tensors) +
                " tensors, room for at most " + std::to_string(room) + " layers of " +
                std::to_string(kLayerTensors) + " tensors");
  }
}

// Tensors some exporters write that LlamaForCausalLM does not load.
bool is_ignored_buffer(const std::string& name) { return ends_with(name, ".rotary_emb.inv_freq"); }

}  // namespace

bool looks_like_hf_checkpoint(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) || ends_with(path, ".safetensors") ||
         ends_with(path, ".safetensors.index.json");
}

HfPaths find_hf_files(const std::string& path) {
  std::error_code ec;
  HfPaths p;
  fs::path dir;
  if (fs::is_directory(path, ec)) {
    dir = path;
    if (is_file(dir / "model.safetensors")) {
      p.weights = (dir / "model.safetensors").string();
    } else if (is_file(dir / "model.safetensors.index.json")) {
      p.weights = (dir / "model.safetensors.index.json").string();
    } else {
      throw Error(path + ": " + no_safetensors(dir));
    }
  } else if (ends_with(path, ".safetensors") || ends_with(path, ".safetensors.index.json")) {
    if (!fs::exists(path, ec)) throw Error(path + ": cannot open: No such file or directory");
    dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    p.weights = path;
  } else if (!fs::exists(path, ec)) {
    throw Error(path + ": cannot open: No such file or directory");
  } else {
    throw Error(path +
                ": not a Hugging Face checkpoint (a directory, a .safetensors file or a "
                "model.safetensors.index.json)");
  }
  p.directory = dir.string();
  if (!is_file(dir / "config.json")) {
    throw Error(p.weights + ": no config.json beside it in " + p.directory +
                " (a Hugging Face checkpoint needs one)");
  }
  p.config = (dir / "config.json").string();
  p.generation_config = optional_file(dir / "generation_config.json");
  p.tokenizer = optional_file(dir / "tokenizer.json");
  p.tokenizer_config = optional_file(dir / "tokenizer_config.json");
  return p;
}

HfCheckpoint HfCheckpoint::open(const std::string& path) {
  HfPaths paths = find_hf_files(path);
  HfConfig config = parse_hf_config(read_text_file(paths.config, kMaxConfigBytes), paths.config);
  if (!paths.generation_config.empty()) {
    apply_generation_config(config, read_text_file(paths.generation_config, kMaxConfigBytes),
                            paths.generation_config);
  }
  auto safetensors =
      std::make_shared<const SafetensorsModel>(SafetensorsModel::open(paths.weights));
  return bind(std::move(paths), std::move(config), std::move(safetensors));
}

HfCheckpoint HfCheckpoint::bind(HfPaths paths, HfConfig config,
                                std::shared_ptr<const SafetensorsModel> safetensors) {
  HfCheckpoint ck;
  ck.paths_ = std::move(paths);
  ck.config_ = std::move(config);
  ck.safetensors_ = std::move(safetensors);
  const SafetensorsModel& st = *ck.safetensors_;
  check_layer_count(ck.config_, st, ck.paths_.config);

  const std::vector<HfTensorSpec> specs = hf_tensor_specs(ck.config_);
  ck.tensors_.reserve(specs.size());
  for (const HfTensorSpec& spec : specs) {
    const SafetensorsModel::Entry e = st.find(spec.name);
    if (e.file == nullptr) {
      throw Error(st.source() + ": missing tensor \"" + spec.name + "\" (" + ck.paths_.config +
                  " describes " + std::to_string(ck.config_.num_hidden_layers) + " layers, " +
                  (ck.config_.tie_word_embeddings ? "tied" : "untied") + " embeddings)");
    }
    const SafetensorsTensor& t = *e.tensor;
    if (t.shape != spec.shape) {
      throw Error(e.file->source() + ": tensor \"" + spec.name + "\" has shape " +
                  shape_string(t.shape) + " but " + ck.paths_.config + " implies " +
                  shape_string(spec.shape));
    }
    if (t.dtype != SafetensorsDtype::F32 && t.dtype != SafetensorsDtype::BF16 &&
        t.dtype != SafetensorsDtype::F16) {
      throw Error(e.file->source() + ": tensor \"" + spec.name + "\" has dtype " +
                  to_string(t.dtype) + "; only F32, BF16 and F16 are supported");
    }
    ck.tensors_.push_back({spec, e.tensor, e.file});
  }
  if (st.entries().size() != specs.size()) {
    std::vector<std::string> expected;
    for (const HfTensorSpec& s : specs) expected.push_back(s.name);
    std::sort(expected.begin(), expected.end());
    for (const SafetensorsModel::Entry& e : st.entries()) {
      const std::string& name = e.tensor->name;
      if (std::binary_search(expected.begin(), expected.end(), name)) continue;
      if ((name == "lm_head.weight" && ck.config_.tie_word_embeddings) || is_ignored_buffer(name)) {
        ck.ignored_.push_back(name);
        continue;
      }
      throw Error(e.file->source() + ": unexpected tensor \"" + name + "\": not a weight of " +
                  ck.config_.architecture + " as " + ck.paths_.config + " describes it (" +
                  std::to_string(ck.config_.num_hidden_layers) + " layers, no biases)");
    }
  }
  return ck;
}

const HfTensor& HfCheckpoint::tensor(HfRole role, int64_t layer) const {
  for (const HfTensor& t : tensors_) {
    if (t.spec.role == role && t.spec.layer == layer) return t;
  }
  throw Error(paths_.weights + ": no tensor for that role" +
              (layer >= 0 ? " in layer " + std::to_string(layer) : std::string()));
}

int64_t HfCheckpoint::weight_bytes() const {
  int64_t total = 0;
  for (const HfTensor& t : tensors_) total += static_cast<int64_t>(t.tensor->bytes.size());
  return total;
}

}  // namespace llama
