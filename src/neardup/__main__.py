"""``python -m neardup``: the ``neardup`` command, run by a given interpreter."""

from neardup.cli import run

run()
