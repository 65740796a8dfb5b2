#!/usr/bin/env bash
# Install the Java runtime Spark needs (the Spark engine's tests run a real local[2] Spark).
# Does nothing when java is on PATH; otherwise installs Debian's openjdk-17-jre-headless with
# apt-get (through sudo when not root).
set -euo pipefail

if command -v java >/dev/null 2>&1; then
    exit 0
fi

exec bash "$(dirname "$0")/apt-install.sh" "java" openjdk-17-jre-headless
