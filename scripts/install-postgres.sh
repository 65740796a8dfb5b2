#!/usr/bin/env bash
# Install the PostgreSQL server binaries the tests run a throwaway server from
# (tests/pgserver.py). Does nothing when initdb is on PATH or under /usr/lib/postgresql/*/bin;
# otherwise installs Debian's postgresql package with apt-get (through sudo when not root).
set -euo pipefail

if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi

exec bash "$(dirname "$0")/apt-install.sh" "initdb" postgresql
