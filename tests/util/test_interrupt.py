import contextlib
import os
import signal

import pytest

from neardup.util import interrupt


@pytest.fixture
def installed():
    previous = signal.getsignal(signal.SIGINT)
    interrupt.install()
    yield
    signal.signal(signal.SIGINT, previous)
    interrupt._requested.clear()


def test_a_ctrl_c_swallowed_once_is_raised_again_by_check(installed):
    interrupt.check()  # nothing asked yet
    with contextlib.suppress(KeyboardInterrupt):  # as compiled code's callbacks swallow it
        os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()


def test_a_ctrl_c_inside_a_finalizer_is_not_printed_but_raised_by_check(installed, capsys):
    """A finalizer's exception is printed as "ignored" and dropped: the interrupt waits for
    the next check instead of writing a traceback beside the command's one line."""
    seen = []

    class Compiled:  # as llvmlite's objects free their code when collected
        def __del__(self):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                seen.append("went on")
            except KeyboardInterrupt:
                seen.append("raised inside")

    Compiled()
    assert seen == ["went on"]
    assert "ignored" not in capsys.readouterr().err
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()
    with pytest.raises(KeyboardInterrupt):  # elsewhere it is raised at once
        os.kill(os.getpid(), signal.SIGINT)
