#!/usr/bin/env bash
# Install the PostgreSQL server binaries the tests run a throwaway server from
# (tests/pgserver.py). Does nothing when initdb is on PATH or under /usr/lib/postgresql/*/bin;
# otherwise installs Debian's postgresql package with apt-get (through sudo when not root).
set -euo pipefail

if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-postgres.sh: initdb not found and no apt-get to install it with;" \
        "install the PostgreSQL server binaries (initdb, pg_ctl) by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
