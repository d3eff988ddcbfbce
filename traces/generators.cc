#include "traces/generators.h"

#include <fmt/core.h>

#include <vector>

#include "model/error.h"
#include "traces/trace_writer.h"

namespace dtr {

namespace {

void Require(bool ok, std::string_view generator, std::string_view option, std::string_view rule) {
  if (!ok) throw Error(fmt::format("gen {}: --{} {}", generator, option, rule));
}

constexpr int64_t kLossSize = 4;  // a scalar loss, as in the public logs

}  // namespace

std::string GenerateChain(const ChainOptions& o) {
  Require(o.layers >= 1, "chain", "layers", "must be at least 1");
  Require(o.size >= 1, "chain", "size", "must be at least 1 byte");
  Require(o.compute >= 0, "chain", "compute", "must not be negative");
  Require(o.backward_compute >= 0, "chain", "backward-compute", "must not be negative");
  TraceWriter w;
  std::vector<std::string> x{w.Constant(o.size)};
  for (int i = 1; i <= o.layers; ++i) x.push_back(w.Call1("layer", {x.back()}, o.size, o.compute));
  w.Annotate("BACKWARD");
  std::string g = w.Call1("ones_like", {x.back()}, o.size, o.compute);
  w.Release(x.back());
  // Layer i's backward needs its input x[i-1] and the gradient of its output.
  for (int i = o.layers; i >= 1; --i) {
    std::string g_in = w.Call1("layer_backward", {g, x[i - 1]}, o.size, o.backward_compute);
    w.Release(g);
    if (i - 1 >= 1) w.Release(x[i - 1]);  // x[0] is the pinned input constant
    g = g_in;
  }
  return w.Take();
}

std::string GenerateResNet(const ResNetOptions& o) {
  Require(o.blocks >= 1, "resnet", "blocks", "must be at least 1");
  Require(o.stages >= 1 && o.stages <= o.blocks, "resnet", "stages",
          "must be between 1 and --blocks");
  Require(o.stages <= 30, "resnet", "stages", "must be at most 30");
  Require(o.size >= (int64_t{1} << (o.stages - 1)), "resnet", "size",
          "must stay at least 1 byte after halving once per stage");
  Require(o.inner_size >= (int64_t{1} << (o.stages - 1)), "resnet", "inner-size",
          "must stay at least 1 byte after halving once per stage");
  Require(o.param_size >= 0, "resnet", "param-size", "must not be negative");
  Require(o.compute >= 0, "resnet", "compute", "must not be negative");
  Require(o.cheap_compute >= 0, "resnet", "cheap-compute", "must not be negative");
  const bool params = o.param_size > 0;

  // What the backward pass needs of each forward layer, in forward order.
  struct Layer {
    bool pool = false;
    std::string in;  // block input, or the pooling's input
    int64_t in_size = 0;
    std::string a, r;  // conv1 and relu outputs of a block
    std::string w1, w2;
    int64_t inner = 0;
  };
  std::vector<Layer> layers;

  TraceWriter w;
  std::string input = w.Constant(o.size);
  std::string stem_w = params ? w.Constant(o.param_size) : "";
  std::vector<std::string> stem_args{input};
  if (params) stem_args.push_back(stem_w);
  std::string h = w.Call1("conv_stem", stem_args, o.size, o.compute);
  int64_t size = o.size;
  for (int s = 0; s < o.stages; ++s) {
    if (s > 0) {
      int64_t half = size / 2;
      layers.push_back({true, h, size, "", "", "", "", 0});
      h = w.Call1("max_pool", {h}, half, o.cheap_compute);
      size = half;
    }
    int64_t inner = o.inner_size >> s;
    int blocks = o.blocks / o.stages + (s < o.blocks % o.stages ? 1 : 0);
    for (int b = 0; b < blocks; ++b) {
      Layer l;
      l.in = h;
      l.in_size = size;
      l.inner = inner;
      if (params) {
        l.w1 = w.Constant(o.param_size);
        l.w2 = w.Constant(o.param_size);
      }
      std::vector<std::string> a_args{h}, c_args;
      if (params) a_args.push_back(l.w1);
      l.a = w.Call1("conv1", a_args, inner, o.compute);
      l.r = w.Call1("relu", {l.a}, inner, o.cheap_compute);
      c_args.push_back(l.r);
      if (params) c_args.push_back(l.w2);
      std::string c = w.Call1("conv2", c_args, size, o.compute);
      h = w.Call1("add", {c, h}, size, o.cheap_compute);
      w.Release(c);  // the add's backward needs neither input
      layers.push_back(l);
    }
  }
  std::string loss = w.Call1("loss", {h}, kLossSize, o.cheap_compute);

  w.Annotate("BACKWARD");
  std::string seed = w.Call1("ones_like", {loss}, kLossSize, o.cheap_compute);
  w.Release(loss);
  std::string g = w.Call1("loss_backward", {seed, h}, size, o.cheap_compute);
  w.Release(seed);
  w.Release(h);
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    const Layer& l = *it;
    if (l.pool) {
      std::string g_in = w.Call1("max_pool_backward", {g, l.in}, l.in_size, o.cheap_compute);
      w.Release(g);
      w.Release(l.in);
      g = g_in;
      continue;
    }
    std::vector<std::string> args2{g, l.r};
    std::vector<TraceWriter::Result> out2{{l.inner, -1}};
    if (params) {
      args2.push_back(l.w2);
      out2.push_back({o.param_size, -1});
    }
    std::string g_r =
        w.Call("conv2_backward", args2, out2, o.compute)[0];  // a weight gradient stays
    std::string g_a = w.Call1("relu_backward", {g_r, l.a}, l.inner, o.cheap_compute);
    w.Release(g_r);
    w.Release(l.r);
    w.Release(l.a);
    std::vector<std::string> args1{g_a, l.in};
    std::vector<TraceWriter::Result> out1{{l.in_size, -1}};
    if (params) {
      args1.push_back(l.w1);
      out1.push_back({o.param_size, -1});
    }
    std::string g_in = w.Call("conv1_backward", args1, out1, o.compute)[0];
    w.Release(g_a);
    w.Release(l.in);
    std::string g_sum = w.Call1("add", {g_in, g}, l.in_size, o.cheap_compute);  // the skip path
    w.Release(g_in);
    w.Release(g);
    g = g_sum;
  }
  if (params) {
    w.Call1("conv_stem_backward", {g, input, stem_w}, o.param_size, o.compute);
    w.Release(g);
  }
  return w.Take();
}

std::string GenerateRnn(const RnnOptions& o) {
  Require(o.steps >= 1, "rnn", "steps", "must be at least 1");
  Require(o.hidden_size >= 1, "rnn", "hidden-size", "must be at least 1 byte");
  Require(o.input_size >= 1, "rnn", "input-size", "must be at least 1 byte");
  Require(o.param_size >= 1, "rnn", "param-size", "must be at least 1 byte");
  Require(o.compute >= 0, "rnn", "compute", "must not be negative");
  Require(o.cheap_compute >= 0, "rnn", "cheap-compute", "must not be negative");
  TraceWriter w;
  std::string weight = w.Constant(o.param_size);
  std::string weight_t = w.Call("t", {weight}, {{o.param_size, 0}}, o.cheap_compute)[0];  // a view
  std::vector<std::string> x{""}, h{w.Constant(o.hidden_size)};
  for (int t = 1; t <= o.steps; ++t) {
    x.push_back(w.Constant(o.input_size));
    std::string pre = w.Call1("rnn_linear", {x[t], h[t - 1], weight_t}, o.hidden_size, o.compute);
    h.push_back(w.Call1("tanh", {pre}, o.hidden_size, o.cheap_compute));
    w.Release(pre);  // tanh's backward reads its output
  }
  std::string loss = w.Call1("loss", {h.back()}, kLossSize, o.cheap_compute);

  w.Annotate("BACKWARD");
  std::string seed = w.Call1("ones_like", {loss}, kLossSize, o.cheap_compute);
  w.Release(loss);
  std::string gh = w.Call1("loss_backward", {seed, h.back()}, o.hidden_size, o.cheap_compute);
  w.Release(seed);
  std::string grad_w;
  for (int t = o.steps; t >= 1; --t) {
    std::string gpre = w.Call1("tanh_backward", {gh, h[t]}, o.hidden_size, o.cheap_compute);
    w.Release(gh);
    w.Release(h[t]);  // step t+1's backward, which read it, is done
    std::vector<std::string> out = w.Call("rnn_linear_backward", {gpre, x[t], h[t - 1], weight_t},
                                          {{o.hidden_size, -1}, {o.param_size, -1}}, o.compute);
    w.Release(gpre);
    w.Release(x[t]);
    if (grad_w.empty()) {
      grad_w = out[1];
    } else {
      std::string sum = w.Call1("add", {grad_w, out[1]}, o.param_size, o.cheap_compute);
      w.Release(grad_w);
      w.Release(out[1]);
      grad_w = sum;
    }
    gh = out[0];
  }
  w.Release(gh);
  w.Release(h[0]);
  w.Release(weight_t);
  return w.Take();  // grad_w and the weight stay referenced: pinned at the end
}

}  // namespace dtr
