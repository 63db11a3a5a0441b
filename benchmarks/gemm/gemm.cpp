// gemm: dense matrix-multiply rate per GPU through cuBLASLt, per dtype and shape. The fastest of
// cuBLASLt's heuristic candidates is chosen on this GPU before timing (as autotuning frameworks
// do), with a 32 MiB workspace. FLOP = 2·M·N·K per multiply. Inputs are random in [-1, 1];
// sampled outputs are checked against a float64 reference (docs/methodology.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gpubench/core/config.hpp"
#include "gpubench/core/errors.hpp"
#include "gpubench/core/precision.hpp"
#include "gpubench/core/text.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"

#if GPUBENCH_HAVE_CUDA
#include "gpubench/harness/cuda.hpp"
#include "gpubench/kernels/gemm.cuh"
#endif

namespace gpubench {
namespace {

#if GPUBENCH_HAVE_CUDA
constexpr std::size_t workspace_bytes = std::size_t{32} << 20;
constexpr int autotune_candidates = 8;
constexpr double autotune_warmup_s = 0.2;
constexpr int check_samples = 256;

class gemm_benchmark final : public instance {
 public:
  gemm_benchmark(const context& /*ctx*/, const axis_values& values)
      : device_(static_cast<int>(values.get_int64("gpu"))),
        dtype_(kernels::parse_gemm_dtype(values.get_string("dtype"))),
        shape_(parse_gemm_shape(values.get_string("shape"))),
        layout_(kernels::parse_gemm_layout(values.get_string("layout"))),
        stream_(device_),
        start_(device_),
        stop_(device_) {
    kernels::require_gemm_dtype(dtype_, device_);
    gemm_ = std::make_unique<kernels::lt_gemm>(stream_, dtype_, shape_.m, shape_.n, shape_.k,
                                               workspace_bytes, 0x6e6du, layout_);
    tuning_ = gemm_->autotune(autotune_candidates, autotune_warmup_s);
    // Several multiplies per timed iteration for small shapes, so events time >= ~2 ms.
    multiplies_ =
        static_cast<int>(std::clamp(std::ceil(2e-3 / tuning_.seconds_per_multiply), 1.0, 1000.0));
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.flops = gemm_->flops() * multiplies_};
  }

  std::optional<double> run_iteration() override {
    start_.record(stream_);
    for (int i = 0; i < multiplies_; ++i) gemm_->enqueue();
    stop_.record(stream_);
    return cuda::elapsed_seconds(start_, stop_);
  }

  [[nodiscard]] verification verify() override {
    const kernels::gemm_check c = gemm_->check(check_samples);
    verification v;
    v.passed = c.wrong == 0;
    char text[200];
    std::snprintf(text, sizeof text,
                  "%d sampled outputs against a float64 reference: %d outside tolerance %.0e "
                  "(worst error %.2e, relative to sqrt(sum (a_k b_k)^2))",
                  c.samples, c.wrong, c.tolerance, c.worst_error);
    v.detail = text;
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{{"m", shape_.m},
                {"n", shape_.n},
                {"k", shape_.k},
                {"types", kernels::gemm_dtype_description(dtype_)},
                {"layout", kernels::gemm_layout_description(layout_)},
                {"library", "cuBLASLt"},
                {"workspace_bytes", workspace_bytes},
                {"algorithms_tried", tuning_.candidates_timed},
                {"algorithms_refused", tuning_.candidates_failed},
                {"algorithm_heuristic_rank", tuning_.chosen_rank},
                {"autotune_warmup_s", tuning_.warmup_s},
                {"multiplies_per_iteration", multiplies_},
                {"flop_per_multiply", "2*M*N*K"}};
  }

 private:
  int device_;
  kernels::gemm_dtype dtype_;
  gemm_shape shape_;
  kernels::gemm_layout layout_;
  cuda::stream stream_;
  cuda::event start_;
  cuda::event stop_;
  std::unique_ptr<kernels::lt_gemm> gemm_;  // uses stream_, so is declared after it
  kernels::gemm_tuning tuning_;
  int multiplies_ = 1;
};

#endif

std::vector<axis_value> square_shapes() {
  std::vector<axis_value> shapes;
  for (int n = 1024; n <= 16384; n *= 2) {
    shapes.emplace_back(std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n));
  }
  return shapes;
}

benchmark_definition gemm_definition() {
  benchmark_definition def("gemm");
  def.set_description("Matrix-multiply rate per GPU (cuBLASLt): " + gemm_dtype_list())
      .add_axis(gpu_axis())
      .add_choice_axis("dtype", {gemm_dtypes.begin(), gemm_dtypes.end()},
                       "input/math type (fp8 needs compute capability 8.9+; mxfp8 and nvfp4, "
                       "block-scaled, 10.0+)")
      .add_axis(axis{
          "layout", axis_kind::string,
          "cuBLAS transpose letters: TN (default; FP8 allows only it), NN (a row-major "
          "framework's a @ b), NT",
          [](const context&) { return std::vector<axis_value>{std::string("TN")}; },
          [](const axis_value& v) {
            const auto& name = std::get<std::string>(v);
            if (std::find(gemm_layouts.begin(), gemm_layouts.end(), name) == gemm_layouts.end()) {
              throw std::invalid_argument("expected one of TN, NN, NT, got '" + name + "'");
            }
          }})
      .add_axis(axis{"shape", axis_kind::string, "MxNxK, or N for a square multiply",
                     [](const context&) { return square_shapes(); },
                     [](const axis_value& v) { (void)parse_gemm_shape(std::get<std::string>(v)); }})
      .add_metric("TFLOPs", metric_kind::compute, units::TFLOPs)
      .set_timing(timing::manual)
      .set_needs_gpu()
      .set_supported(cublaslt_gpu_unavailable_reason);
#if GPUBENCH_HAVE_CUDA
  def.set_instance<gemm_benchmark>();
#else
  def.set_factory(unavailable_factory("built without CUDA"));
#endif
  return def;
}

GPUBENCH_REGISTER(gemm_definition());

}  // namespace
}  // namespace gpubench
