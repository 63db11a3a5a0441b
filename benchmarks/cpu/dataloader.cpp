// cpu.dataloader: PyTorch's own DataLoader on this machine. Where a python3 with torch and
// torchvision is found, it runs a torch.utils.data.DataLoader over a torchvision ImageFolder of
// cpu.augment's JPEG corpus, with a ResNet-50 training script's transforms (RandomResizedCrop,
// RandomHorizontalFlip, ToTensor, Normalize), for a number of worker processes. gpubench
// writes the corpus, starts configs/python/cpu_dataloader.py and times each round of batches
// it asks for; the script checks every batch and reports the versions it ran with. The loader's
// rate depends on the CPU, the Pillow build and the torch version: what the sizing model's
// python-loader ceiling needs measured rather than assumed.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpubench/benchmarks/cpu/augment_pipeline.hpp"
#include "gpubench/benchmarks/cpu/jpeg_corpus.hpp"
#include "gpubench/benchmarks/cpu/python_child.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/core/config_paths.hpp"
#include "gpubench/core/statistics.hpp"
#include "gpubench/harness/benchmark.hpp"
#include "gpubench/harness/context.hpp"
#include "gpubench/harness/runner.hpp"

namespace gpubench {
namespace {

namespace fs = std::filesystem;

// Importing torch on a cold disk and starting the workers, or one round of batches, may take
// long; past this a hung interpreter is a failed case, not a stuck run.
constexpr double answer_timeout_s = 600;
// The loader's batches in flight (workers x prefetch factor 2) may take at most this share of
// host memory: the default worker counts stop there.
constexpr double batch_memory_share = 0.25;
// The default batch and crop: a ResNet-50 script's; the default worker counts are sized for them.
constexpr std::int64_t default_batch = 256;
constexpr std::int64_t default_size = 224;

// The corpus in an ImageFolder layout (one class), written once per image size for the run's
// cases, under the first scratch folder; and the 1-worker rates the scaling efficiency of the
// later cases is measured against.
struct corpus_folder {
  fs::path root;
  std::vector<std::uint8_t> first_jpeg;  // image 0: the fixed sample's source
  double mean_jpeg_bytes = 0;
  std::map<std::string, std::vector<double>> one_worker_rates;  // per batch/output size

  corpus_folder() = default;
  corpus_folder(const corpus_folder&) = delete;
  corpus_folder& operator=(const corpus_folder&) = delete;
  ~corpus_folder() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
};

corpus_folder& corpus_for(const context& ctx, int width, int height) {
  const std::string key =
      "cpu.dataloader corpus " + std::to_string(width) + "x" + std::to_string(height);
  if (auto* found = ctx.resources().find<corpus_folder>(key)) return *found;
  if (ctx.options().scratch_dirs.empty()) throw std::runtime_error("no scratch folder to use");
  auto corpus = std::make_unique<corpus_folder>();
  std::string pattern =
      (ctx.options().scratch_dirs.front() / "gpubench-dataloader-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot make a folder under " +
                             ctx.options().scratch_dirs.front().string() + " for the JPEGs");
  }
  corpus->root = pattern;
  const fs::path images = corpus->root / "class_0";
  fs::create_directory(images);
  // On every core: the DataLoader's case uses them all (its workers and the main process).
  const auto jpegs = augment::jpeg_corpus_for(ctx, width, height, 0);
  for (std::size_t i = 0; i < jpegs->images.size(); ++i) {
    const auto& jpeg = jpegs->images[i];
    char name[32];
    std::snprintf(name, sizeof name, "img_%03zu.jpg", i);
    std::ofstream out(images / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(jpeg.data()),
              static_cast<std::streamsize>(jpeg.size()));
    if (!out) throw std::runtime_error("cannot write the JPEG corpus to " + images.string());
  }
  corpus->first_jpeg = jpegs->images.front();
  corpus->mean_jpeg_bytes = jpegs->mean_bytes;
  return ctx.resources().add(key, std::move(corpus));
}

class cpu_dataloader final : public instance {
 public:
  cpu_dataloader(const context& ctx, const axis_values& values)
      : width_(static_cast<int>(values.get_int64("image_width"))),
        height_(static_cast<int>(values.get_int64("image_height"))),
        size_(static_cast<int>(values.get_int64("output_size"))),
        batch_(static_cast<int>(values.get_int64("batch"))),
        workers_(static_cast<int>(values.get_int64("workers"))),
        corpus_(corpus_for(ctx, width_, height_)),
        rate_key_(std::to_string(batch_) + "/" + std::to_string(size_)),
        box_{height_ / 8, width_ / 10, height_ * 3 / 4, width_ * 4 / 5} {
    const python::search found = python::find_with_torch(ctx.options().python);
    if (!found.found) throw std::runtime_error(python::not_found_reason(found));
    python_ = *found.found;
    const fs::path script = config_dir() / "python" / "cpu_dataloader.py";
    if (!fs::is_regular_file(script)) throw std::runtime_error(script.string() + " is missing");
    check_file_ = corpus_.root / ("fixed_sample_" + std::to_string(workers_) + ".rgb");
    stderr_file_ = corpus_.root / ("python_" + std::to_string(workers_) + ".log");
    child_ = std::make_unique<python::child>(
        std::vector<std::string>{python_.string(), "-u", script.string(), "--root",
                                 corpus_.root.string(), "--workers", std::to_string(workers_),
                                 "--batch", std::to_string(batch_), "--size", std::to_string(size_),
                                 "--check-box",
                                 std::to_string(box_.top) + "," + std::to_string(box_.left) + "," +
                                     std::to_string(box_.height) + "," + std::to_string(box_.width),
                                 "--check-out", check_file_.string()},
        stderr_file_);
    ready_ = answer("while torch was imported and the loader's workers started");
    if (!ready_.value("ready", false))
      throw std::runtime_error("python: unexpected " + ready_.dump());
  }

  ~cpu_dataloader() override {
    std::error_code ec;
    child_.reset();
    fs::remove(check_file_, ec);
    fs::remove(stderr_file_, ec);
  }
  cpu_dataloader(const cpu_dataloader&) = delete;
  cpu_dataloader& operator=(const cpu_dataloader&) = delete;
  cpu_dataloader(cpu_dataloader&&) = delete;
  cpu_dataloader& operator=(cpu_dataloader&&) = delete;

  // One round: a batch from every worker, so each iteration sees the whole pool at work.
  [[nodiscard]] work work_per_iteration() const override {
    return work{.items = static_cast<double>(workers_) * batch_};
  }

  std::optional<double> run_iteration() override {
    child_->send_line("run " + std::to_string(workers_));
    const json got = answer("while it made a round of batches");
    const auto images = got.value("images", std::int64_t{0});
    if (images != static_cast<std::int64_t>(workers_) * batch_) {
      throw std::runtime_error("python: " + std::to_string(images) +
                               " images in a round, expected " +
                               std::to_string(static_cast<std::int64_t>(workers_) * batch_));
    }
    images_ += images;
    bad_batches_ += got.value("bad_batches", std::int64_t{0});
    if (problem_.empty()) problem_ = got.value("problem", std::string());
    const double seconds = got.value("seconds", 0.0);
    if (!(seconds > 0))
      throw std::runtime_error("python: a round took " + std::to_string(seconds) + " s");
    return seconds;
  }

  [[nodiscard]] std::vector<std::pair<std::string, double>> extra_metrics(
      double seconds) const override {
    const double rate = static_cast<double>(workers_) * batch_ / seconds;
    std::vector<std::pair<std::string, double>> out{{"images_per_s_per_worker", rate / workers_}};
    std::vector<double>& one_worker = corpus_.one_worker_rates[rate_key_];
    if (workers_ == 1) {
      one_worker.push_back(rate);
    } else if (!one_worker.empty()) {
      out.emplace_back("scaling_efficiency", rate / (workers_ * summarize(one_worker).median));
    }
    return out;
  }

  [[nodiscard]] verification verify() override {
    // 1. Every batch had the shape, dtype and label count asked for, and its first and last
    //    image stayed finite and inside the normalized range (the script's checks).
    // 2. The fixed sample: image 0 at a fixed crop, decoded and resized by PIL in the script,
    //    agrees within one 8-bit level with gpubench's own libjpeg-turbo decode and PIL-exact
    //    resize of the same bytes (augment_pipeline.hpp).
    augment::jpeg_decoder decoder;
    augment::rgb_image image;
    decoder.decode(corpus_.first_jpeg, image);
    const augment::rgb_image ours = augment::resize_bilinear_antialias(image, box_, size_, size_);
    std::ifstream in(check_file_, std::ios::binary);
    const std::vector<char> theirs((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
    int worst = 256;
    if (theirs.size() == ours.pixels.size()) {
      worst = 0;
      for (std::size_t i = 0; i < theirs.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<int>(static_cast<unsigned char>(theirs[i])) -
                                         static_cast<int>(ours.pixels[i])));
      }
    }
    verification v;
    v.passed = bad_batches_ == 0 && worst <= 1;
    v.detail = std::to_string(images_) + " images in batches of " + std::to_string(batch_) + "; " +
               std::to_string(bad_batches_) + " batch(es) wrong" +
               (problem_.empty() ? std::string() : " (" + problem_ + ")") +
               "; fixed sample (PIL) vs gpubench's decode and resize: " +
               (worst > 255 ? std::to_string(theirs.size()) + " bytes, expected " +
                                  std::to_string(ours.pixels.size())
                            : "worst difference " + std::to_string(worst) + " level(s)") +
               " (allowed 1)";
    return v;
  }

  [[nodiscard]] json info() const override {
    return json{{"python", python_.string()},
                {"versions", ready_.value("versions", json::object())},
                {"loader",
                 "torch.utils.data.DataLoader(ImageFolder, batch_size=" + std::to_string(batch_) +
                     ", num_workers=" + std::to_string(workers_) +
                     ", persistent_workers, prefetch_factor=2, pin_memory when CUDA is there); "
                     "RandomResizedCrop(" +
                     std::to_string(size_) + ") -> RandomHorizontalFlip -> ToTensor -> Normalize"},
                {"pin_memory", ready_.value("pin_memory", false)},
                {"stages_ms", ready_.value("stages_ms", json::object())},
                {"fixed_sample", ready_.value("fixed_sample", json::object())},
                {"corpus_images", augment::corpus_images},
                {"jpeg_quality", augment::corpus_jpeg_quality},
                {"mean_jpeg_bytes", corpus_.mean_jpeg_bytes}};
  }

 private:
  json answer(const char* during) {
    const std::string line = child_->read_line(answer_timeout_s, during);
    json got = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!got.is_object()) throw std::runtime_error("python wrote '" + line + "' " + during);
    if (got.contains("error")) {
      throw std::runtime_error("python: " + got.value("error", std::string()) +
                               child_->stderr_tail());
    }
    return got;
  }

  int width_;
  int height_;
  int size_;
  int batch_;
  int workers_;
  corpus_folder& corpus_;
  std::string rate_key_;
  augment::crop_box box_;
  fs::path python_;
  fs::path check_file_;
  fs::path stderr_file_;
  std::unique_ptr<python::child> child_;
  json ready_;
  std::int64_t images_ = 0;
  std::int64_t bad_batches_ = 0;
  std::string problem_;
};

// 1, 2, 4, ... below the cores, then every core; no more than the batches in flight fit in a
// share of host memory.
std::vector<axis_value> default_workers(const context& ctx, std::int64_t batch, std::int64_t size) {
  const double batch_bytes = static_cast<double>(batch) * 3 * static_cast<double>(size) *
                             static_cast<double>(size) * sizeof(float);
  const double memory = static_cast<double>(ctx.system().memory_bytes);
  const std::int64_t by_memory =
      memory > 0
          ? std::max<std::int64_t>(
                1, static_cast<std::int64_t>(batch_memory_share * memory / (2 * batch_bytes)))
          : std::int64_t{ctx.host_cores()};
  const std::int64_t most = std::min<std::int64_t>(ctx.host_cores(), by_memory);
  std::vector<axis_value> out;
  for (std::int64_t w = 1; w < most; w *= 2) out.emplace_back(w);
  out.emplace_back(most);
  return out;
}

benchmark_definition dataloader_definition() {
  benchmark_definition def("cpu.dataloader");
  def.set_description(
         "PyTorch's DataLoader (ImageFolder, torchvision transforms) images/s per worker count")
      .add_axis("image_width", axis_kind::integer, {std::int64_t{500}}, "source JPEG width")
      .add_axis("image_height", axis_kind::integer, {std::int64_t{375}}, "source JPEG height")
      .add_axis("output_size", axis_kind::integer, {default_size}, "crop output side")
      .add_axis("batch", axis_kind::integer, {default_batch}, "images per batch")
      .add_axis(axis{
          "workers", axis_kind::integer,
          "loader worker processes: 1, 2, 4, ... and every core (as host memory "
          "allows the batches in flight)",
          [](const context& ctx) { return default_workers(ctx, default_batch, default_size); }})
      .set_range("image_width", axis_range{16, 8192})
      .set_range("image_height", axis_range{16, 8192})
      .set_range("output_size", axis_range{8, 2048})
      .set_range("batch", axis_range{1, 65536})
      .set_range("workers", axis_range{1, 4096})
      .add_metric("images_per_s", metric_kind::items_per_s, units::per_s)
      .add_extra_metric("images_per_s_per_worker", units::per_s, better::higher)
      .add_extra_metric("scaling_efficiency", units::ratio, better::higher)
      // The script's clock: a round runs from the batch before it was asked for to its last,
      // the training loop (a thread) pulling all the while.
      .set_timing(timing::manual)
      .set_scope(run_scope::per_node)
      .set_supported([](const context& ctx) -> std::optional<std::string> {
        if (!GPUBENCH_HAVE_TURBOJPEG) return std::string("built without libturbojpeg");
        const python::search found = python::find_with_torch(ctx.options().python);
        if (!found.found) return python::not_found_reason(found);
        return std::nullopt;
      })
      .set_instance<cpu_dataloader>();
  return def;
}

GPUBENCH_REGISTER(dataloader_definition());

}  // namespace
}  // namespace gpubench
