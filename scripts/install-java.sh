#!/usr/bin/env bash
# Install the Java runtime Spark needs (the Spark engine's tests run a real local[2] Spark and
# a standalone cluster of a master and two workers).
# Does nothing when java is on PATH; otherwise installs Debian's openjdk-17-jre-headless with
# apt-get (through sudo when not root). Spark's daemon script checks its daemons with ps:
# procps too when ps is missing (slim images).
set -euo pipefail

if ! command -v ps >/dev/null 2>&1; then
    bash "$(dirname "$0")/apt-install.sh" "ps" procps
fi
if command -v java >/dev/null 2>&1; then
    exit 0
fi

exec bash "$(dirname "$0")/apt-install.sh" "java" openjdk-17-jre-headless
