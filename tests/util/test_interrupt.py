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
