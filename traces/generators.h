// Deterministic synthetic trace generators. Each returns the text of a trace
// in the DTR execution-log format (docs/trace_format.md): a forward pass, a
// BACKWARD annotation, and a backward pass that consumes the saved forward
// tensors in reverse order and releases each one after its last use. The same
// options always give the same bytes.
//
// Sizes are bytes, computes are the TIME of an operator (arbitrary units, as
// in the public logs). Invalid options throw dtr::Error naming the option.
#pragma once

#include <cstdint>
#include <string>

namespace dtr {

// The uniform linear network of the DTR paper (Kirisame et al., ICLR 2021,
// section 4): N layers of equal size and cost, then their N backward layers.
// Operators: the input constant, N forward layers, the gradient seed
// (ones_like), N backward layers: 2N + 2 in all. The input's gradient is the
// only name left referenced at the end.
struct ChainOptions {
  int layers = 16;
  int64_t size = 1 << 20;
  int64_t compute = 1000;           // of every forward layer and the gradient seed
  int64_t backward_compute = 1000;  // of every backward layer
};
std::string GenerateChain(const ChainOptions& options);

// A residual network: a stem convolution, then `blocks` residual blocks
// y = add(conv2(relu(conv1(x))), x) split evenly into `stages` stages; each new
// stage starts with a pooling that halves the activation sizes. The inner
// tensors of a block (conv1, relu) have `inner_size` bytes (scaled like the
// stage), the block's input and output `size`. With param_size > 0, every
// convolution has a weight constant and its backward also returns a weight
// gradient of that size, kept to the end (as the public ResNet-32 log does).
struct ResNetOptions {
  int blocks = 8;
  int stages = 1;
  int64_t size = 1 << 20;
  int64_t inner_size = 1 << 20;
  int64_t param_size = 0;
  int64_t compute = 1000;       // convolutions and their backward
  int64_t cheap_compute = 100;  // relu, add, pooling, loss and their backward
};
std::string GenerateResNet(const ResNetOptions& options);

// An unrolled recurrent network: h_t = tanh(linear(x_t, h_{t-1}, W^T)) for
// `steps` steps, with inputs and the initial state as constants, a loss on
// the last state, and backpropagation through time. W^T is an aliasing view
// of the weight constant; the linear backward returns two outputs (the state
// gradient and a weight gradient), which are summed into one weight gradient
// kept to the end.
struct RnnOptions {
  int steps = 16;
  int64_t hidden_size = 1 << 20;
  int64_t input_size = 1 << 18;
  int64_t param_size = 1 << 16;
  int64_t compute = 1000;       // the linear layer and its backward
  int64_t cheap_compute = 100;  // tanh, add, loss and their backward
};
std::string GenerateRnn(const RnnOptions& options);

}  // namespace dtr
