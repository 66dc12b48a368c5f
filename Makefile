# The two set-up commands of the README: `make demo` and `make test`.
# Both create .venv, install what is needed and build the package.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip
OUT ?= build/out

SHELL := /bin/bash
.PHONY: demo test install gpu-wheels check-layers test-python test-c test-gpu test-array-api bench bench-gpu bench-gpu-graphs bench-gpu-pykernels bench-gpu-blas bench-gpu-index bench-gpu-multi sanitize soak clean

$(VENV)/.deps: pyproject.toml Makefile
	@echo "creating $(VENV) and installing what the build, the tests and the demo use (pip's lines follow)"
	$(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install --progress-bar off "numpy>=1.26" "pytest>=7" "hypothesis>=6.151" "scikit-build-core>=0.10" "cmake>=3.18" ninja "scikit-image>=0.22" \
		"ndindex>=1.8" pytest-json-report "matplotlib>=3.5" "tqdm>=4.60" "dask[array]>=2024.1" "distributed>=2024.1" \
		"pytest-xdist>=3"
	touch $@

# One build tree for the package and the C tests (make test used to build
# the core twice: pip's tree and build/ctest): CK_BUILD_TESTS=ON, as test and
# test-c set it, adds the C test programs to pip's build; ninja's [n/N] lines
# show what it compiles.
PYBUILD := build/py
CK_BUILD_TESTS ?= OFF
install: $(VENV)/.deps
	@echo "building cudakit (C core, extension$(if $(filter ON,$(CK_BUILD_TESTS)),$(comma) C tests)) in $(PYBUILD) and installing it into $(VENV)"
	set -o pipefail; $(PIP) install -v --no-build-isolation --no-deps -C build-dir=$(PYBUILD) \
		-C cmake.define.CK_BUILD_TESTS=$(CK_BUILD_TESTS) . 2>&1 | grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|rror|arning|^Successfully'

# The seed's MLP on Fashion-MNIST (examples/train_mlp.py; Debian's
# dataset-fashion-mnist, installed here when missing and root with apt),
# then the array examples.  DEMO_ARGS=--quick for a short run.
FASHION_MNIST := /usr/share/datasets/fashion-mnist
DEMO_ARGS ?=
# (.deps holds the demo's extras, matplotlib and tqdm)
demo: install
	@if [ ! -d $(FASHION_MNIST) ] && [ -z "$$CUDAKIT_DATA" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
	        echo "installing Debian's dataset-fashion-mnist"; \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -q dataset-fashion-mnist > /dev/null 2>&1 || \
	        { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q dataset-fashion-mnist > /dev/null; } || \
	        echo "could not install dataset-fashion-mnist"; \
	    else \
	        echo "Fashion-MNIST is not installed: 'sudo apt-get install dataset-fashion-mnist' (Debian, Ubuntu), or set CUDAKIT_DATA to a folder holding its four IDX files"; \
	    fi; \
	fi
	@if $(VPY) -c "import cudakit.nn, cudakit.optim" 2> /dev/null; then \
	    rc=0; $(VPY) examples/train_mlp.py --out $(OUT)/demo $(DEMO_ARGS) || rc=$$?; \
	    if [ $$rc = 3 ]; then echo "(the training demo needs Fashion-MNIST: see above)"; elif [ $$rc != 0 ]; then exit $$rc; fi; \
	else \
	    echo "ck.nn is not in this build yet: the training demo (examples/train_mlp.py) is skipped"; \
	fi
	$(VPY) examples/demo.py

comma := ,
test test-c: CK_BUILD_TESTS = ON
# The C tests run beside the Python tests (their NVRTC batches leave a core
# idle for half their time), their log shown when both are done.
test: install check-layers
	@echo "running the C tests (ctest, log in $(PYBUILD)/ctest.log) beside the Python tests"
	@$(CTEST) > $(PYBUILD)/ctest.log 2>&1 & c_pid=$$!; \
	$(MAKE) --no-print-directory test-python; py=$$?; \
	wait $$c_pid; c=$$?; cat $(PYBUILD)/ctest.log; \
	echo "make test: C tests $$([ $$c = 0 ] && echo passed || echo FAILED), Python tests $$([ $$py = 0 ] && echo passed || echo FAILED)"; \
	[ $$c = 0 ] && [ $$py = 0 ]

# Every #include points down the layer order of docs/layout.md.
check-layers:
	$(PY) tools/check_layers.py

# pytest-xdist: one worker per core (TEST_JOBS=1 runs them in this process)
TEST_JOBS ?= $(shell nproc)
test-python:
	$(VPY) -m pytest tests $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS))

# The C tests of install's build tree, as many at once as there are cores
# (test_codegen's NVRTC batches: the front end, every 16th batch on to PTX;
# CK_TEST_NVRTC=ptx compiles every batch to PTX, tests/c/ck_nvrtc_batch.h).
# (test runs $(CTEST) itself, not `make test-c`: test-c's install would
# reinstall the package under the Python tests while they import it)
CTEST = $(VENV)/bin/ctest --test-dir $(PYBUILD) --output-on-failure -j $(TEST_JOBS)
test-c: install
	$(CTEST)

# The array API standard's own test suite (a snapshot in ../shared/array-api-tests,
# HOW-TO-RUN.md there), copied first (CI's shared/ is read-only), with a bounded
# number of hypothesis examples; expected failures, each with its reason, in
# tools/array_api_xfails.txt (--rootdir=.: else pytest roots the run at this
# project, through the file's path, and no test id matches).  On the CPU unless
# CUDAKIT_DEVICE says otherwise.
# (.aat: a copy carried to the GPU machine, where ../shared does not travel)
AAT_SRC ?= $(firstword $(wildcard ../shared/array-api-tests shared/array-api-tests ../../shared/array-api-tests /work/shared/array-api-tests .aat))
AAT_EXAMPLES ?= 20
define run_array_api_tests
$(1) -c "import hypothesis, ndindex, pytest_jsonreport" || { echo "the array API suite needs hypothesis>=6.151, ndindex and pytest-json-report (pip install them, or carry their wheels to a machine without a network)"; exit 1; } && \
	rm -rf build/aat && mkdir -p build && cp -r $(AAT_SRC) build/aat && chmod -R u+w build/aat && cd build/aat && \
	CUDAKIT_DEVICE=$(2) ARRAY_API_TESTS_MODULE=cudakit $(1) -m pytest array_api_tests -q -p no:cacheprovider \
	--rootdir=. --max-examples $(AAT_EXAMPLES) --disable-deadline --xfails-file=$(abspath tools/array_api_xfails.txt) -rfxX
endef
# The suite is not part of this repository: where no copy is found (a
# checkout without the shared folder beside it) the target says so and passes.
test-array-api: install
	$(if $(AAT_SRC),$(call run_array_api_tests,$(abspath $(VPY)),$(or $(CUDAKIT_DEVICE),cpu)),@echo "test-array-api: no copy of array-api-tests found (looked in ../shared, shared, ../../shared, /work/shared); skipped")

# C tests under AddressSanitizer and UBSan.  CK_TEST_NVRTC=0 generates every
# kernel but leaves NVRTC out (CI's run: the tests 457 s -> 66 s here).
ASAN_DIR ?= build/asan
sanitize: $(VENV)/.deps
	$(VENV)/bin/cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
		-DCK_BUILD_PYTHON=OFF -DCK_BUILD_TESTS=ON -DCK_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug > /dev/null
	$(VENV)/bin/cmake --build $(ASAN_DIR)
	$(VENV)/bin/ctest --test-dir $(ASAN_DIR) --output-on-failure

bench: install
	$(VPY) bench/bench_cpu.py
	$(VPY) bench/bench_cpu_pykernels.py
	$(VPY) bench/bench_cpu_mlp.py

# On the GPU machine (no network): build with the tools already there.
# Wheels carried in .whl (Dask and distributed for tests/test_dask.py, the
# array API suite's ndindex and pytest-json-report: `pip download -d .whl
# --python-version 3.12 --only-binary=:all: ...` here) are unpacked into
# build/site, put on PYTHONPATH for the runs below.
GPU_WHEELS ?= .whl
GPU_SITE := $(abspath build/site)
# A dataset carried to the GPU machine as .data (the device tool's carry:
# .data/fashion-mnist), for the MLP bench's accuracy rows, unless
# CUDAKIT_DATA names one already.
GPU_DATA := $(or $(CUDAKIT_DATA),$(if $(wildcard .data/fashion-mnist .data/mnist),$(abspath .data)))
gpu-wheels:
	@if ls $(GPU_WHEELS)/*.whl > /dev/null 2>&1; then \
	    echo "installing the carried wheels of $(GPU_WHEELS) into $(GPU_SITE)"; \
	    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target $(GPU_SITE) $(GPU_WHEELS)/*.whl; \
	else mkdir -p $(GPU_SITE); fi

test-gpu: export PYTHONPATH := $(GPU_SITE)$(if $(PYTHONPATH),:$(PYTHONPATH))
test-gpu: gpu-wheels
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 -m pytest tests -q -p no:cacheprovider -n 8 2>&1 | tee $(OUT)/test-gpu.log
	$(if $(AAT_SRC),set -o pipefail; ($(call run_array_api_tests,python3,cuda)) 2>&1 | tee $(OUT)/test-array-api.log,@echo "test-array-api: no copy of array-api-tests (carry one as .aat); skipped")

# Each library's bench runs even when an earlier one fails (make says "Error ... (ignored)").
bench-gpu: export PYTHONPATH := $(GPU_SITE)$(if $(PYTHONPATH),:$(PYTHONPATH))
bench-gpu: export CUDAKIT_DATA := $(GPU_DATA)
bench-gpu: gpu-wheels
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu.py --out $(OUT)/bench-gpu.md 2>&1 | tee $(OUT)/bench-gpu.log
	-nvcc -O2 -o build/probe_launch bench/probe_launch.cu -lcuda && build/probe_launch 2>&1 | tee $(OUT)/probe-launch.log
	-nvcc -arch=sm_90 -O2 -o build/probe_pdl bench/probe_pdl.cu && build/probe_pdl 2>&1 | tee $(OUT)/probe-pdl.log
	-nvcc -arch=sm_90 -O2 -o build/probe_small_gemm bench/probe_small_gemm.cu -lcublas && build/probe_small_gemm 2>&1 | tee $(OUT)/probe-small-gemm.log
	-set -o pipefail; python3 bench/probe_small_gemm.py --out $(OUT)/probe-small-gemm.md 2>&1 | tee $(OUT)/probe-small-gemm-py.log
	-set -o pipefail; python3 bench/bench_gpu_fft_solver.py --out $(OUT)/bench-gpu-fft-solver.md 2>&1 | tee $(OUT)/bench-gpu-fft-solver.log
	-set -o pipefail; python3 bench/bench_gpu_kernels.py --out $(OUT)/bench-gpu-kernels.md 2>&1 | tee $(OUT)/bench-gpu-kernels.log
	-set -o pipefail; python3 bench/bench_gpu_pykernels.py --out $(OUT)/bench-gpu-pykernels.md 2>&1 | tee $(OUT)/bench-gpu-pykernels.log
	-set -o pipefail; python3 bench/bench_gpu_blas.py --out $(OUT)/bench-gpu-blas.md 2>&1 | tee $(OUT)/bench-gpu-blas.log
	-set -o pipefail; python3 bench/bench_gpu_sort.py --out $(OUT)/bench-gpu-sort.md 2>&1 | tee $(OUT)/bench-gpu-sort.log
	-set -o pipefail; python3 bench/bench_gpu_index.py --out $(OUT)/bench-gpu-index.md 2>&1 | tee $(OUT)/bench-gpu-index.log
	-set -o pipefail; python3 bench/bench_gpu_mlp.py --accuracy --out $(OUT)/bench-gpu-mlp.md 2>&1 | tee $(OUT)/bench-gpu-mlp.log
	-set -o pipefail; python3 bench/bench_gpu_trainops.py --out $(OUT)/bench-gpu-trainops.md 2>&1 | tee $(OUT)/bench-gpu-trainops.log
	-set -o pipefail; python3 bench/bench_gpu_profiler.py --out $(OUT)/bench-gpu-profiler.md $(if $(BEFORE),--before $(BEFORE)) 2>&1 | tee $(OUT)/bench-gpu-profiler.log
	-set -o pipefail; python3 bench/bench_gpu_graphs.py --out $(OUT)/bench-gpu-graphs.md 2>&1 | tee $(OUT)/bench-gpu-graphs.log
	-set -o pipefail; python3 bench/bench_gpu_dask.py --out $(OUT)/bench-gpu-dask.md 2>&1 | tee $(OUT)/bench-gpu-dask.log
	-set -o pipefail; python3 bench/bench_gpu_multi.py --out $(OUT)/bench-gpu-multi.md 2>&1 | tee $(OUT)/bench-gpu-multi.log
	-set -o pipefail; python3 bench/bench_autograd.py --device cuda 2>&1 | tee $(OUT)/bench-gpu-autograd.log
	-set -o pipefail; python3 bench/probe_nn_step.py cuda 2>&1 | tee $(OUT)/probe-nn-step.log

# Python kernels against numba-cuda, CuPy's RawKernel and PyTorch (issue 14).
bench-gpu-pykernels:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu_pykernels.py --out $(OUT)/bench-gpu-pykernels.md 2>&1 | tee $(OUT)/bench-gpu-pykernels.log

# The soak (tests/soak/soak.py) on the GPU machine, built with the tools
# there: DURATION seconds or with s/m/h (10m), SOAK_DEVICE cuda or cpu (the
# GPU when one is usable); the log, the summary with the pool's figures
# (soak.json) and the exit status (soak.rc) under $(OUT).
DURATION ?= 10m
SOAK_DEVICE ?=
soak:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	PYTHONUNBUFFERED=1 python3 tests/soak/soak.py --duration $(DURATION) $(if $(SOAK_DEVICE),--device $(SOAK_DEVICE)) \
		--log $(OUT)/soak.log --json $(OUT)/soak.json 2>&1; rc=$$?; echo $$rc > $(OUT)/soak.rc; exit $$rc

# graphs (20 small ops replayed) and copies overlapped on 2-4 streams, against PyTorch (issue 15)
# Several GPUs of one host (issue 19): peer copy, all_reduce, the MLP data-parallel
bench-gpu-multi:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu_multi.py --out $(OUT)/bench-gpu-multi.md 2>&1 | tee $(OUT)/bench-gpu-multi.log

bench-gpu-graphs:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu_graphs.py --out $(OUT)/bench-gpu-graphs.md 2>&1 | tee $(OUT)/bench-gpu-graphs.log

# matmul 8192^3 (float32, TF32, float16) against PyTorch and CuPy
bench-gpu-blas:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu_blas.py --out $(OUT)/bench-gpu-blas.md 2>&1 | tee $(OUT)/bench-gpu-blas.log

# Gather and mask compaction of 2^26 against PyTorch and CuPy (issue 5).
bench-gpu-index:
	mkdir -p $(OUT)
	set -o pipefail; python3 -m pip install -q --no-build-isolation --no-deps . 2>&1 | tee $(OUT)/build.log
	set -o pipefail; python3 bench/bench_gpu_index.py --out $(OUT)/bench-gpu-index.md 2>&1 | tee $(OUT)/bench-gpu-index.log

clean:
	rm -rf build $(VENV)
