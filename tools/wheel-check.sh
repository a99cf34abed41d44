#!/usr/bin/env bash
# The running Python's wheel from dist/ (make wheel) as a new user gets it: installed with pip
# into a fresh venv under /tmp, its dependencies from PyPI, then run from /tmp so that the
# checkout's python/ is nowhere on sys.path. Fails on the first thing that is wrong: no wheel,
# a tag that is not manylinux, an extension that needs a library outside the manylinux policy
# (libabsl, libpython, ...), an import or a command that fails.
# Usage: tools/wheel-check.sh (make wheel-check); PYTHON=python3.12 checks another interpreter's
# wheel, WHEEL_DIR=DIR the wheels in DIR rather than dist/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
wheel_dir=${WHEEL_DIR:-$root/dist}

fail() { echo "wheel-check: FAILED: $*" >&2; exit 1; }

tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
shopt -s nullglob
wheels=("$wheel_dir"/volcanic-*-"$tag"-"$tag"-manylinux_*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "want one $tag manylinux wheel in dist/, found ${#wheels[@]} in $wheel_dir: run make wheel"
wheel=${wheels[0]}
echo "wheel-check: $(basename "$wheel")"

venv=$(mktemp -d /tmp/volcanic-wheel-check.XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel"

# What the extension needs at run time: only libraries every manylinux system has (auditwheel's
# policy lists them); Abseil is linked in, and an extension never links libpython.
so=$(echo "$venv"/lib/python*/site-packages/volcanic/_core.*.so)
[ -f "$so" ] || fail "the wheel installed no volcanic/_core extension"
for lib in $(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $lib in
    libc.so.6 | libm.so.6 | libstdc++.so.6 | libgcc_s.so.1 | ld-linux-x86-64.so.2 | libpthread.so.0 | \
      libdl.so.2 | librt.so.1) ;;
    *) fail "$(basename "$so") needs $lib, which is outside the manylinux policy" ;;
  esac
done
echo "wheel-check: $(basename "$so") needs only manylinux libraries"

# From outside the checkout: the installed package must be the one imported.
cd "$venv"
"$venv/bin/python" - "$venv" "$(basename "$wheel" | cut -d- -f2)" <<'EOF'
import sys

import volcanic
import volcanic._core

venv, version = sys.argv[1:]
assert volcanic.__version__ == version, f"volcanic says it is {volcanic.__version__}, the wheel is {version}"
for module in (volcanic, volcanic._core):
    assert module.__file__.startswith(venv), f"{module.__name__} imported from {module.__file__}, not the venv"
print(f"wheel-check: volcanic {volcanic.__version__} imports from the venv")
EOF

# The README's first command (make run), through the installed console script.
"$venv/bin/volcanic" run "$root/examples/cluster.yaml" "$root/examples/tensorflow.yaml" \
  "$root/examples/mindspore.yaml" "$root/examples/queues.yaml"
# What `volcanic up` installs on a cluster: the manifests ship inside the wheel.
"$venv/bin/volcanic" install --print --all >"$venv/manifests.yaml"
grep -q "kind: CustomResourceDefinition" "$venv/manifests.yaml" || fail "volcanic install --print --all wrote no CRD"
echo "wheel-check: passed"
