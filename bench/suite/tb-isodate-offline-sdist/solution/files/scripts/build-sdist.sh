#!/bin/bash
# Build the source distribution into dist/ with nothing but setuptools:
# no build isolation, no downloads (works on an offline build box).
# Usage: bash scripts/build-sdist.sh   (from anywhere; it uses the project root)
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build src/*.egg-info
mkdir -p dist
python3 - <<'PY'
from setuptools import build_meta

name = build_meta.build_sdist("dist")
print("built dist/" + name)
PY
rm -rf build src/*.egg-info
