#!/usr/bin/env bash
# Install PostgreSQL, Chromium and Java (when missing), neardup with every extra (Spark
# included) and the test tools, then run the whole test suite.
# The Quickstart's test command and CI (.ci/run) both run exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-postgres.sh  # the server binaries; the tests start their own server
bash scripts/install-chromium.sh  # headless browser and driver of the browser tests
bash scripts/install-java.sh  # Spark's runtime: local[2] and standalone-cluster tests
python -m pip install --quiet --disable-pip-version-check -e ".[all,dev]"
python -m ruff check src tests benchmarks
python -m neardup compile  # the kernels once, before each test process would compile its own
python -m pytest -n 2 "$@"
