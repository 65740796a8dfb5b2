"""``python -m neardup``: the ``neardup`` command, for environments without its script on PATH."""

from neardup.cli import run

if __name__ == "__main__":
    run()
