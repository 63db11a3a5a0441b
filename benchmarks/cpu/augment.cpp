// cpu.augment: how many training samples per second this machine's CPUs prepare, with the image
// pipeline of a typical torchvision loader (augment_pipeline.hpp): JPEG decode, RandomResizedCrop
// to 224 with PIL's antialiased bilinear resize, random horizontal flip, normalize to float32
// CHW. The JPEG corpus is generated, deterministically (ImageNet-like sizes), never downloaded
// (jpeg_corpus.hpp). One pinned worker per thread, each with its own decoder and buffers.
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>

#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"
#include "gpubench/benchmarks/cpu/jpeg_corpus.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/runner.hpp"
#include "gpubench/harness/thread_pool.hpp"

namespace gpubench {
namespace {

constexpr int samples_per_worker = 16;  // per timed iteration

struct worker_state {
  augment::jpeg_decoder decoder;
  augment::rgb_image decoded;
  std::vector<float> tensor;
  std::mt19937_64 rng;
  std::uint64_t next = 0;
};

class cpu_augment final : public instance {
 public:
  cpu_augment(const context& ctx, const axis_values& values)
      : width_(static_cast<int>(values.get_int64("image_width"))),
        height_(static_cast<int>(values.get_int64("image_height"))),
        out_(static_cast<int>(values.get_int64("output_size"))),
        threads_(static_cast<int>(values.get_int64("threads"))) {
    corpus_ = augment::jpeg_corpus_for(ctx, width_, height_, static_cast<std::size_t>(threads_));
    pool_ = std::make_unique<pinned_thread_pool>(threads_);
    for (int t = 0; t < threads_; ++t) {
      auto w = std::make_unique<worker_state>();
      w->tensor.resize(3 * static_cast<std::size_t>(out_) * static_cast<std::size_t>(out_));
      w->rng.seed(0xA0C0 + static_cast<std::uint64_t>(t));
      w->next = static_cast<std::uint64_t>(t) * 7;
      workers_.push_back(std::move(w));
    }
    if (threads_ > 1) {
      // The one-core rate this case's scaling efficiency is measured against: warmed up, then
      // timed for at least 0.3 s on worker 0's core while the others idle.
      pool_->run([this](int worker) {
        if (worker != 0) return;
        for (int i = 0; i < 16 && !interrupt_requested(); ++i) process(*workers_[0]);
        const auto start = std::chrono::steady_clock::now();
        int samples = 0;
        double elapsed = 0;
        while (elapsed < 0.3 && !interrupt_requested()) {
          process(*workers_[0]);
          ++samples;
          elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
        single_core_rate_ = samples / elapsed;
      });
    }
  }

  [[nodiscard]] work work_per_iteration() const override {
    return work{.items = static_cast<double>(samples_per_worker * threads_)};
  }

  std::optional<double> run_iteration() override {
    pool_->run([this](int worker) {
      worker_state& w = *workers_[static_cast<std::size_t>(worker)];
      for (int i = 0; i < samples_per_worker && !interrupt_requested(); ++i) process(w);
    });
    stop_if_interrupted("during the timed samples");
    return std::nullopt;
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double seconds) const override {
    const double rate = samples_per_worker * threads_ / seconds;
    std::vector<std::pair<std::string, double>> out{
        {"samples_per_s_per_core", rate / threads_},
        {"jpeg_MBps", rate * corpus_->mean_bytes / 1e6}};
    if (single_core_rate_ > 0) {
      out.emplace_back("scaling_efficiency", rate / (threads_ * single_core_rate_));
    }
    return out;
  }

  [[nodiscard]] verification verify() override {
    // 1. Every tensor value produced stayed finite and inside the normalized [0, 255] range.
    // 2. A fixed crop of image 0 resized by the fast fixed-point path agrees, within one 8-bit
    //    level, with a float64 evaluation of the same separable antialiased filter.
    augment::rgb_image image;
    workers_[0]->decoder.decode(corpus_->images.front(), image);
    const augment::crop_box box{image.height / 8, image.width / 10, image.height * 3 / 4,
                                image.width * 4 / 5};
    const augment::rgb_image fast = augment::resize_bilinear_antialias(image, box, out_, out_);
    const int worst = worst_difference_to_reference(image, box, fast);
    verification v;
    v.passed = out_of_range_ == 0 && worst <= 1;
    v.detail = std::to_string(processed_.load()) + " samples; " +
               std::to_string(out_of_range_.load()) +
               " tensor values non-finite or out of range; resize vs float64 reference: worst "
               "difference " +
               std::to_string(worst) + " level(s) (allowed 1)";
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{
        {"pipeline", "decode (libturbojpeg) -> RandomResizedCrop(" + std::to_string(out_) +
                         ", scale 0.08-1, ratio 3/4-4/3, bilinear antialias as PIL) -> "
                         "horizontal flip p=0.5 -> normalize (ImageNet mean/std), float32 CHW"},
        {"corpus_images", augment::corpus_images},
        {"jpeg_quality", augment::corpus_jpeg_quality},
        {"mean_jpeg_bytes", corpus_->mean_bytes},
        {"threads", threads_},
        {"cpus", pool_->bound_cpus()},
        {"single_core_samples_per_s",
         single_core_rate_ > 0 ? json(single_core_rate_) : json(nullptr)}};
  }

 private:
  void process(worker_state& w) {
    const auto& jpeg = corpus_->images[w.next++ % corpus_->images.size()];
    w.decoder.decode(jpeg, w.decoded);
    const augment::crop_box box =
        augment::random_resized_crop_params(w.decoded.width, w.decoded.height, w.rng);
    augment::rgb_image resized = augment::resize_bilinear_antialias(w.decoded, box, out_, out_);
    if (std::uniform_int_distribution<int>(0, 1)(w.rng) == 1) augment::flip_horizontal(resized);
    augment::normalize_to_chw(resized, w.tensor.data());
    std::uint64_t bad = 0;
    for (float v : w.tensor) bad += !(v >= -2.2f && v <= 2.7f);  // (0-mean)/std .. (1-mean)/std
    out_of_range_ += bad;
    ++processed_;
  }

  // Largest |fast - reference| over all output values, in 8-bit levels.
  int worst_difference_to_reference(const augment::rgb_image& src, const augment::crop_box& box,
                                    const augment::rgb_image& fast) const {
    const auto weights = [](int in_size, int out_size, int o, int& first, std::vector<double>& w) {
      const double scale = static_cast<double>(in_size) / out_size;
      const double fs = std::max(scale, 1.0);
      const double center = (o + 0.5) * scale;
      // PIL's truncation toward zero, as in augment_pipeline.cpp.
      // NOLINTBEGIN(bugprone-incorrect-roundings)
      first = std::max(static_cast<int>(center - fs + 0.5), 0);
      const int last = std::min(static_cast<int>(center + fs + 0.5), in_size);
      // NOLINTEND(bugprone-incorrect-roundings)
      w.clear();
      double total = 0;
      for (int i = first; i < last; ++i) {
        const double t = std::abs((i - center + 0.5) / fs);
        w.push_back(t < 1 ? 1 - t : 0);
        total += w.back();
      }
      for (double& x : w) x /= total;
    };
    int worst = 0;
    std::vector<double> wx;
    std::vector<double> wy;
    for (int oy = 0; oy < out_; ++oy) {
      int fy = 0;
      weights(box.height, out_, oy, fy, wy);
      for (int ox = 0; ox < out_; ++ox) {
        int fx = 0;
        weights(box.width, out_, ox, fx, wx);
        for (int c = 0; c < 3; ++c) {
          double sum = 0;
          for (std::size_t j = 0; j < wy.size(); ++j) {
            for (std::size_t i = 0; i < wx.size(); ++i) {
              const std::size_t at =
                  (static_cast<std::size_t>(box.top + fy + static_cast<int>(j)) * src.width +
                   static_cast<std::size_t>(box.left + fx + static_cast<int>(i))) *
                      3 +
                  static_cast<std::size_t>(c);
              sum += wy[j] * wx[i] * src.pixels[at];
            }
          }
          const int reference = static_cast<int>(std::lround(std::clamp(sum, 0.0, 255.0)));
          const int got =
              fast.pixels[(static_cast<std::size_t>(oy) * out_ + static_cast<std::size_t>(ox)) * 3 +
                          static_cast<std::size_t>(c)];
          worst = std::max(worst, std::abs(got - reference));
        }
      }
    }
    return worst;
  }

  int width_;
  int height_;
  int out_;
  int threads_;
  std::shared_ptr<const augment::jpeg_corpus> corpus_;
  std::unique_ptr<pinned_thread_pool> pool_;
  std::vector<std::unique_ptr<worker_state>> workers_;
  double single_core_rate_ = 0;
  std::atomic<std::uint64_t> out_of_range_{0};
  std::atomic<std::uint64_t> processed_{0};
};

benchmark_definition augment_definition() {
  benchmark_definition def("cpu.augment");
  def.set_description("CPU data preparation: JPEG decode + RandomResizedCrop + flip + normalize")
      .add_axis("image_width", axis_kind::integer, {std::int64_t{500}}, "source JPEG width")
      .add_axis("image_height", axis_kind::integer, {std::int64_t{375}}, "source JPEG height")
      .add_axis("output_size", axis_kind::integer, {std::int64_t{224}}, "crop output side")
      .add_axis(axis{"threads", axis_kind::integer, "worker threads: 1 and every core",
                     [](const context& ctx) {
                       std::vector<axis_value> v{std::int64_t{1}};
                       if (ctx.host_cores() > 1) v.emplace_back(std::int64_t{ctx.host_cores()});
                       return v;
                     }})
      .set_range("image_width", axis_range{16, 8192})
      .set_range("image_height", axis_range{16, 8192})
      .set_range("output_size", axis_range{8, 2048})
      .set_range("threads", axis_range{1, 4096})
      .add_metric("samples_per_s", metric_kind::items_per_s, units::per_s)
      .add_extra_metric("samples_per_s_per_core", units::per_s, better::higher)
      .add_extra_metric("jpeg_MBps", units::MBps, better::higher)
      .add_extra_metric("scaling_efficiency", units::ratio, better::higher)
      .set_timing(timing::host_wall)
      .set_scope(run_scope::per_node)
      .set_supported([](const context&) -> std::optional<std::string> {
        if (!GPUBENCH_HAVE_TURBOJPEG) return std::string("built without libturbojpeg");
        return std::nullopt;
      })
      .set_instance<cpu_augment>();
  return def;
}

GPUBENCH_REGISTER(augment_definition());

}  // namespace
}  // namespace gpubench
