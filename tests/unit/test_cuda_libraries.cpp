// What gpubench says when the driver, cuBLASLt or NCCL cannot be used, and the run-time loader
// behind cuBLASLt, NCCL and NVML.
#include <catch2/catch.hpp>

#include "detail/library_messages.hpp"
#include "detail/shared_library.hpp"
#include "gpubench/core/config.hpp"
#include "gpubench/harness/cuda_libraries.hpp"

using namespace gpubench;

TEST_CASE("a driver older than the build's CUDA says which versions and what to do", "[cuda]") {
  CHECK(detail::cuda_driver_too_old(12040, 13000) ==
        "the NVIDIA driver supports CUDA 12.4; this build needs 13.0: update the driver to "
        "release 580 or newer, or rebuild gpubench with a CUDA 12.x toolkit");
  CHECK(detail::cuda_driver_too_old(11080, 12080) ==
        "the NVIDIA driver supports CUDA 11.8; this build needs 12.8: update the driver to "
        "release 525 or newer, or rebuild gpubench with a CUDA 11.x toolkit");
  CHECK(detail::cuda_driver_too_old(10020, 14000) ==
        "the NVIDIA driver supports CUDA 10.2; this build needs 14.0: update the driver");
  CHECK(detail::minimum_driver_release(13) == 580);
  CHECK(detail::minimum_driver_release(12) == 525);
}

TEST_CASE("library versions are written as their projects write them", "[cuda]") {
  CHECK(detail::cuda_version_text(13000) == "13.0");
  CHECK(detail::cuda_version_text(12040) == "12.4");
  CHECK(detail::nccl_version_text(22803) == "2.28.3");
  CHECK(detail::nccl_version_text(21903) == "2.19.3");
  CHECK(detail::cublas_version_text(130002) == "13.0.2");
  CHECK(detail::cublas_version_text(120904) == "12.9.4");
}

TEST_CASE("a GPU older than the build's lowest architecture is named with the fix", "[cuda]") {
  CHECK(detail::lowest_build_architecture("75;80;86;89;90;100") == 75);
  CHECK(detail::lowest_build_architecture("90a-real;100-virtual") == 90);
  CHECK(detail::lowest_build_architecture("all") == 0);
  CHECK(detail::lowest_build_architecture("") == 0);
  CHECK(detail::gpu_too_old_for_build(8, 0, "75;80;90", 13000).empty());
  CHECK(detail::gpu_too_old_for_build(7, 0, "all", 13000).empty());
  CHECK(detail::gpu_too_old_for_build(7, 0, "75;80;86;89;90;100", 13000) ==
        "compute capability 7.0 is older than this build's lowest target sm_75: rebuild with "
        "-DCMAKE_CUDA_ARCHITECTURES=70 and a CUDA 12.x toolkit (CUDA 13 builds nothing older "
        "than sm_75)");
  CHECK(detail::gpu_too_old_for_build(7, 5, "80;90", 12080) ==
        "compute capability 7.5 is older than this build's lowest target sm_80: rebuild with "
        "-DCMAKE_CUDA_ARCHITECTURES=75");
}

TEST_CASE("a library that cannot be loaded is named with what needs it and where to get it",
          "[cuda]") {
  const auto lt = detail::cublaslt_facts(13, 0);
  CHECK(lt.soname == "libcublasLt.so.13");
  const std::string message =
      detail::library_not_loaded(lt, "libcublasLt.so.13: cannot open shared object file");
  CHECK_THAT(message, Catch::StartsWith("cuBLASLt could not be loaded (libcublasLt.so.13: cannot "
                                        "open shared object file): gemm and gpu.burn need cuBLAS "
                                        "13.0 (libcublasLt.so.13); install it from the CUDA 13 "
                                        "toolkit's lib64 folder"));
  CHECK_THAT(message, Catch::EndsWith("put its folder on LD_LIBRARY_PATH or name the file in "
                                      "GPUBENCH_CUBLASLT_LIBRARY"));
  const auto nccl = detail::nccl_facts(2, 28);
  CHECK(nccl.soname == "libnccl.so.2");
  CHECK_THAT(detail::library_lacks_entry_point(nccl, "/opt/libnccl.so.2", "ncclCommInitRankConfig"),
             Catch::StartsWith("NCCL at /opt/libnccl.so.2 has no ncclCommInitRankConfig: it is "
                               "older than the NCCL 2.28 this build needs for the nccl.* "
                               "benchmarks"));
}

TEST_CASE("the run-time loader tries each candidate and says why none loaded", "[cuda]") {
  std::string why;
  CHECK(detail::shared_library::open({"libgpubench-none.so.1", "/nowhere/libgpubench-none.so.1"},
                                     why) == nullptr);
  CHECK_THAT(why, Catch::Contains("libgpubench-none.so.1: cannot open shared object file") &&
                      Catch::Contains("; /nowhere/libgpubench-none.so.1"));
  CHECK(detail::shared_library::open({""}, why) == nullptr);
  CHECK(why == "no library named");

  const auto libm = detail::shared_library::open({"libgpubench-none.so.1", "libm.so.6"}, why);
  REQUIRE(libm != nullptr);
  CHECK_THAT(libm->path(), Catch::Contains("libm.so.6"));
  double (*cosine)(double) = nullptr;
  REQUIRE(libm->bind("cos", cosine));
  CHECK(cosine(0.0) == 1.0);
  CHECK_FALSE(libm->bind("gpubench_no_such_symbol", cosine));
}

#if GPUBENCH_HAVE_CUDA
TEST_CASE("a CUDA build loads the cuBLASLt it was built against, found at build time", "[cuda]") {
  const auto reason = cuda::cublaslt_unavailable_reason();
  INFO(reason.value_or(""));
  REQUIRE_FALSE(reason);
  CHECK_THAT(cuda::loaded_cublaslt_version(),
             Catch::StartsWith(std::to_string(CUBLAS_VER_MAJOR) + "."));
  CHECK_THAT(cuda::cublaslt_status(),
             Catch::Contains("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR)));
  CHECK(cuda::cublaslt().cublasLtMatmul != nullptr);
}
#endif

#if GPUBENCH_HAVE_NCCL
TEST_CASE("a build with NCCL loads libnccl.so.2 and reads its version from it", "[cuda]") {
  const auto reason = cuda::nccl_unavailable_reason();
  INFO(reason.value_or(""));
  REQUIRE_FALSE(reason);
  CHECK_THAT(cuda::loaded_nccl_version(), Catch::StartsWith("2."));
  CHECK(cuda::nccl().ncclCommInitRankConfig != nullptr);
  CHECK_THAT(cuda::nccl_status(), Catch::Contains("libnccl.so.2"));
}
#endif
