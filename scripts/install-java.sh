#!/usr/bin/env bash
# Install the Java runtime Spark needs (the Spark engine's tests run a real local[2] Spark).
# Does nothing when java is on PATH; otherwise installs Debian's openjdk-17-jre-headless with
# apt-get (through sudo when not root).
set -euo pipefail

if command -v java >/dev/null 2>&1; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-java.sh: java not found and no apt-get to install it with;" \
        "install a Java 17 runtime by hand (Spark needs it)" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    openjdk-17-jre-headless
