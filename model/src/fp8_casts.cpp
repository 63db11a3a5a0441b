// What fp8 training adds around its GEMMs (docs/model.md, "fp8"): each linear layer's input, its
// weight and, in the backward pass, its output gradient are cast from the 16-bit precision to
// fp8, with the transposed copy the other GEMM of the backward pass reads (Transformer Engine's
// fused cast-transpose; torchao's float8 casts likewise). The scale (amax) is found in the same
// pass. These are memory-bound kernels the fp8 GEMMs' speed does not cover.
#include "presets.hpp"

namespace gpubench::model::detail {

namespace {

// A cast reads the 16-bit tensor once and writes its narrow copy and its transpose (for the block-
// scaled types, a copy scaled along each dimension), each with its scales.
constexpr double copies_written = 2;
// Per linear GEMM: the input and the weight before the forward GEMM, the output gradient before
// the backward ones.
constexpr double casts_per_linear = 3;

}  // namespace

void apply_fp8_casts(step_ops& step, const training_precision& precision) {
  // Only a precision whose linear layers run in a narrower dtype than the rest casts.
  if (!precision.casts_linear_layers()) return;
  const double per_element = precision.activation_bytes + copies_written * precision.cast_bytes();
  double bytes = 0;
  double kernels = 0;
  for (const op& o : step.ops) {
    if (o.kind != op_kind::matmul || !o.linear || o.backward) continue;
    const auto m = static_cast<double>(o.m);
    const auto n = static_cast<double>(o.n);
    const auto k = static_cast<double>(o.k);
    // The input [m x k], the weight [k x n] and the output gradient [m x n].
    bytes += (m * k + k * n + m * n) * per_element * o.count;
    kernels += casts_per_linear * o.count / static_cast<double>(o.batched);
  }
  if (bytes <= 0) return;
  step.ops.push_back(op{op_kind::memory, 0, 0, 0, 1, bytes, false});
  step.kernels += kernels;
}

}  // namespace gpubench::model::detail
