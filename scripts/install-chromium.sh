#!/usr/bin/env bash
# Install the headless browser the browser tests drive (tests/service/test_web_browser.py): Debian's
# chromium and chromium-driver. Does nothing when /usr/bin/chromium and /usr/bin/chromedriver
# are both there; otherwise installs them with apt-get (through sudo when not root).
set -euo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi

exec bash "$(dirname "$0")/apt-install.sh" "/usr/bin/chromium or /usr/bin/chromedriver" chromium chromium-driver
