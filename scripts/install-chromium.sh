#!/usr/bin/env bash
# Install the headless browser the browser tests drive (tests/test_web_browser.py): Debian's
# chromium and chromium-driver. Does nothing when /usr/bin/chromium and /usr/bin/chromedriver
# are both there; otherwise installs them with apt-get (through sudo when not root).
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium.sh: /usr/bin/chromium or /usr/bin/chromedriver not found and no" \
        "apt-get to install them with; install chromium and its chromedriver by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    chromium chromium-driver
