#include "traces/manifest.h"

#include <fmt/core.h>

#include <filesystem>

#include "model/error.h"

namespace dtr {

const std::vector<GeneratorEntry>& TraceGenerators() {
  static const std::vector<GeneratorEntry> kGenerators = {
      {"chain", "the DTR paper's uniform linear network: N equal layers, then their backward",
       "dtrcheck gen chain --layers 32"},
      {"resnet", "residual blocks add(conv2(relu(conv1(x))), x) in stages that halve the sizes",
       "dtrcheck gen resnet --blocks 8 --stages 2 --inner-size 2097152"},
      {"rnn", "an unrolled recurrent network with backpropagation through time",
       "dtrcheck gen rnn --steps 32"},
      {"layered", "a random layered DAG: a source, layers of nodes, a sink (seeded)",
       "dtrcheck gen layered --nodes 100 --seed 7"},
      {"graph", "a Checkmate or Moccasin node-link JSON graph, read as a trace",
       "dtrcheck gen graph vgg16.json"},
      {"demo", "the embedded demo trace: a small residual network with a feasibility inversion",
       "dtrcheck gen demo"},
  };
  return kGenerators;
}

const std::vector<PublicTraceEntry>& PublicTraces() {
  static const std::vector<PublicTraceEntry> kTraces = {
      {"tv_densenet121", "DenseNet-121 (84)", "224x224"},
      {"inceptionv4", "InceptionV4 (64)", "299x299"},
      {"resnet32", "ResNet-32 (56)", "224x224"},
      {"transformer", "Transformer (10)", "512x512"},
      {"unet", "U-Net (6)", "416x608"},
      {"treelstm", "TreeLSTM (D.6)", "binary tree of depth 6, node size 640x1"},
      {"lstm", "LSTM (512)", "input dimension 512, hidden dimension 1700, sequence length 128"},
      {"unroll_gan", "Unrolled GAN", "10 steps, 512x512"},
  };
  return kTraces;
}

std::string FindPublicTrace(const std::string& dir, std::string_view name) {
  bool known = false;
  for (const PublicTraceEntry& e : PublicTraces()) known |= e.name == name;
  if (!known) throw Error(fmt::format("'{}' is not a known public trace name", name));
  std::error_code ec;
  std::string prefix = fmt::format("{}-", name);
  std::string found;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string file = e.path().filename().string();
    if (file.rfind(prefix, 0) == 0 && e.path().extension() == ".log") {
      if (!found.empty())
        throw Error(fmt::format("{}: more than one trace named {}-*.log", dir, name));
      found = e.path().string();
    }
  }
  if (ec) throw Error(fmt::format("{}: cannot list the directory ({})", dir, ec.message()));
  if (found.empty()) throw Error(fmt::format("{}: no trace named {}-*.log", dir, name));
  return found;
}

}  // namespace dtr
