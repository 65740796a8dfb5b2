#!/usr/bin/env bash
# apt-install.sh WHAT PACKAGE...: install Debian packages with apt-get (through sudo when not
# root) for a test dependency the calling install-*.sh found missing; WHAT names it in the
# one-line error when there is no apt-get.
set -euo pipefail

what="$1"
shift
if ! command -v apt-get >/dev/null 2>&1; then
    echo "${0##*/}: $what not found and no apt-get to install it with;" \
        "install $* (or the equivalent) by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
