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
constexpr int64_t kMaxConfigBytes = 16 << 20;  // real ones are a few KB

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
  HfCheckpoint ck;
  ck.paths_ = find_hf_files(path);
  ck.config_ = parse_hf_config(read_text_file(ck.paths_.config, kMaxConfigBytes), ck.paths_.config);
  if (!ck.paths_.generation_config.empty()) {
    apply_generation_config(ck.config_,
                            read_text_file(ck.paths_.generation_config, kMaxConfigBytes),
                            ck.paths_.generation_config);
  }
  ck.safetensors_ =
      std::make_shared<const SafetensorsModel>(SafetensorsModel::open(ck.paths_.weights));
  const SafetensorsModel& st = *ck.safetensors_;

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
