"""Shared fixtures: a throwaway PostgreSQL server per test session (per xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pgserver import PostgresServer, running_server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session, started on first use (fails if not installed)."""
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return postgres_server.create_database()
