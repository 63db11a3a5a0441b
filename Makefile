# The two commands a new user needs (README.md):
#   make run   installs what is missing, builds, runs the full suite (build/gpubench run)
#   make test  the same set-up, then every test through CTest, in two builds: one with CUDA and
#              MPI (where found, gcc), and one with neither (clang) under ASan+UBSan that also
#              fuzzes every input parser. The second is the build without CUDA that CI tests;
#              `make build-nocuda` gives the plain gcc one (CMakePresets.json: nocuda).
BUILD_DIR ?= build
NOCUDA_BUILD_DIR ?= build-nocuda
SANITIZE_BUILD_DIR ?= build-sanitize
BUNDLE_BUILD_DIR ?= build-bundle
JOBS ?= $(shell nproc)
# Debian packages the build and the tests need (README, "Two commands"). The CUDA 13 toolkit (nvcc,
# cuBLAS, NCCL) is not a Debian package: where it is absent, the CUDA parts are left out.
DEBIAN_PACKAGES := cmake make g++ pkg-config git libcli11-dev nlohmann-json3-dev catch2 \
  libbenchmark-dev libopenmpi-dev openmpi-bin liburing-dev libturbojpeg0-dev libhwloc-dev \
  libsimdjson-dev
# The browser test tier renders the HTML reports in headless Chromium; the sanitizer and fuzz
# tier is built with clang (AddressSanitizer, UndefinedBehaviorSanitizer, libFuzzer); the schema
# test checks docs/schema/ with python3-jsonschema; python3-torchvision is the real DataLoader
# cpu.dataloader runs and the loader check holds the model to.
TEST_PACKAGES := chromium clang libclang-rt-14-dev python3-jsonschema python3-prometheus-client python3-torchvision python3-yaml shellcheck zsh
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test deps build build-nocuda build-sanitize gpu-check gpu-bundle

run: build
	$(BUILD_DIR)/gpubench run

# Target-specific: `make test` also installs the test-only packages (passed on to deps).
test: PACKAGES_EXTRA := $(TEST_PACKAGES)
test: build build-sanitize
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS) -LE gpu
	ctest --test-dir $(SANITIZE_BUILD_DIR) --output-on-failure -j$(JOBS) -LE 'browser|long|deploy'

deps:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES) $(PACKAGES_EXTRA); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS)

build-nocuda: deps
	cmake -S . -B $(NOCUDA_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_CUDA=OFF -DGPUBENCH_MPI=OFF
	cmake --build $(NOCUDA_BUILD_DIR) -j$(JOBS)

# On a machine with a GPU: every GPU benchmark with its data checked, the GPU test tier, and
# PyTorch's figures beside gpubench's; writes docs/validation/gpu_check-<gpu>.txt and exits 1 on
# any miss (docs/validation/gpu_check.py). It runs the bundle `make gpu-bundle` packed, if one is
# there (a GPU machine without the Debian packages), else build/.
gpu-check:
	@if [ ! -d .carry/gpubench-bundle ] && [ -z "$${GPUBENCH_BUNDLE:-}" ] && [ ! -x $(BUILD_DIR)/gpubench ]; then \
	  $(MAKE) build; \
	fi
	python3 docs/validation/gpu_check.py

# Packs gpubench and the GPU test tier, built without MPI, with the shared libraries they need,
# into .carry/gpubench-bundle for a GPU machine that has only a driver, python3 and torch.
gpu-bundle: deps
	cmake -S . -B $(BUNDLE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_CUDA=ON -DGPUBENCH_MPI=OFF
	cmake --build $(BUNDLE_BUILD_DIR) -j$(JOBS) --target gpubench gpubench_gpu_tests
	tools/make_bundle.sh $(BUNDLE_BUILD_DIR) .carry/gpubench-bundle

# Unit and CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer, and a libFuzzer target
# per input parser (CMakePresets.json: sanitize).
build-sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DGPUBENCH_CUDA=OFF \
	  -DGPUBENCH_MPI=OFF -DGPUBENCH_SANITIZE=ON -DGPUBENCH_FUZZ=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
	cmake --build $(SANITIZE_BUILD_DIR) -j$(JOBS)
