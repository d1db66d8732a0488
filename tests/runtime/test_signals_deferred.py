"""A signal that would cut a step in two waits for the step's end; waits stay interruptible.

Real signals, sent by this process to itself, with fp8lab's handlers installed
for the length of each test.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from fp8lab.runtime.parallel import each_done
from fp8lab.runtime.proctree import SignalInterrupt, install_signal_handlers, signals_deferred


@pytest.fixture(autouse=True)
def _handlers() -> Iterator[None]:
    restore = install_signal_handlers()
    yield
    restore()


def _send(signum: int) -> None:
    """Send ``signum`` to this process; Python runs the handler before this returns."""
    os.kill(os.getpid(), signum)
    time.sleep(0.01)  # a signal from kill() is pending before kill() returns; this lets it land


def test_outside_a_block_a_signal_raises_at_once() -> None:
    with pytest.raises(SignalInterrupt) as caught:
        _send(signal.SIGTERM)
    assert caught.value.exit_status == 143


def _two_signals_in_nested_blocks(steps: list[str]) -> None:
    with signals_deferred():
        with signals_deferred():
            _send(signal.SIGTERM)
            steps.append("inner")
        steps.append("outer")  # the inner block's end is not the end
        _send(signal.SIGINT)  # a second signal: the first is the one raised
        steps.append("last")
    steps.append("after")


def test_inside_a_block_the_first_signal_raises_as_the_outermost_block_ends() -> None:
    steps: list[str] = []
    with pytest.raises(SignalInterrupt) as caught:
        _two_signals_in_nested_blocks(steps)
    assert steps == ["inner", "outer", "last"]
    assert caught.value.signum == signal.SIGTERM
    _send(signal.SIGTERM)  # later signals are ignored, as without a block


def test_a_block_in_another_thread_defers_nothing() -> None:
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with signals_deferred():
            inside.set()
            leave.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(10)
        with pytest.raises(SignalInterrupt):  # the other thread's block defers nothing here
            _send(signal.SIGTERM)
    finally:
        leave.set()
        holder.join()


def test_a_signal_held_for_a_handler_restored_since_is_dropped() -> None:
    restore = install_signal_handlers()
    with signals_deferred():
        _send(signal.SIGTERM)
        restore()  # back to the fixture's handler, which never saw the signal
    with pytest.raises(SignalInterrupt):  # and which still raises for a signal of its own
        _send(signal.SIGINT)


def test_each_done_yields_in_finishing_order() -> None:
    futures: list[Future[int]] = [Future() for _ in range(3)]
    futures[0].set_result(0)  # done before the wait
    order = each_done(futures)
    assert next(order) is futures[0]
    futures[2].set_result(2)
    assert next(order) is futures[2]
    threading.Timer(0.05, futures[1].set_result, (1,)).start()  # while it waits
    assert next(order) is futures[1]
    assert list(order) == []


def test_a_signal_lands_in_each_dones_wait_and_leaves_no_lock_held() -> None:
    never: Future[int] = Future()
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    with pytest.raises(SignalInterrupt):
        list(each_done([never]))
    finisher = threading.Thread(target=never.set_result, args=(1,))
    finisher.start()
    finisher.join(10)
    assert not finisher.is_alive(), "the future's lock is still held"
