"""Requests from the viewer's threads, carried out by the thread that steps the world.

The Foxglove SDK calls a service handler on a thread of its own; the world is touched only by
the thread that steps it. :meth:`Requests.call` queues an action and waits for its answer;
:meth:`Requests.serve`, called by the step loop between steps, carries out what waits. The
queue is bounded, for each client and in all (a flood of calls is answered "busy" at once, and
one client's flood leaves room for the others' calls), every wait has a limit, and a
request that was not started when its wait ran out is withdrawn, so it never happens after its
caller was told it failed. Units: seconds of wall time.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from typing import Callable, Hashable

from sim_server.core import limits
from sim_server.core.control import Reply
from sim_server.core.errors import SimError, one_line

LOGGER = logging.getLogger("sim_server")

#: Wall seconds a request waits to be started by the step loop before it is withdrawn.
START_WAIT = 10.0


#: An action: run on the step loop's thread with the reply to finish (now or later).
Action = Callable[[Reply], None]


class Requests:
    """A bounded queue of actions from other threads for the step loop's thread: at most
    ``capacity`` wait in all and ``per_client`` of one client."""

    def __init__(self, capacity: int = limits.MAX_VIEW_REQUESTS_WAITING,
                 per_client: int = limits.MAX_VIEW_REQUESTS_WAITING_PER_CLIENT) -> None:
        self.capacity = capacity
        self.per_client = per_client
        self._lock = threading.Lock()
        self._waiting: deque[tuple[Action, Reply]] = deque()
        #: Requests waiting, by client.
        self._of_client: Counter = Counter()
        self._closed = False
        #: Requests refused because the queue was full.
        self.refused = 0

    def call(self, action: Action, answer_wait: float, what: str, client: Hashable = None) -> tuple[bool, str]:
        """From a client's thread: queue ``action`` for ``client`` (an id of the caller) and wait
        for its answer (success, message).

        The step loop must start it within :data:`START_WAIT` seconds and answer within
        ``answer_wait`` seconds of the start; otherwise it is withdrawn (not started) or told to
        stop (:attr:`Reply.abandoned`), and the answer is a failure naming ``what``.
        """
        reply = Reply()
        with self._lock:
            if self._closed:
                return False, "the live view is closing"
            if self._of_client[client] >= self.per_client:
                self.refused += 1
                return False, f"busy: {self.per_client} requests of this client are waiting already; try again"
            if len(self._waiting) >= self.capacity:
                self.refused += 1
                return False, f"busy: {self.capacity} requests are waiting already; try again"
            self._waiting.append((action, reply))
            self._of_client[client] += 1
        if not reply.wait(START_WAIT):
            with self._lock:
                if not reply.started:
                    self._waiting = deque(item for item in self._waiting if item[1] is not reply)
                    self._of_client[client] -= 1
                    return False, (
                        f"{what} was not started within {START_WAIT:g} s: the simulation is not serving the "
                        "view (in-process, call LiveView.serve() between steps, or LiveView.run())"
                    )
        if not reply.wait(answer_wait):
            reply.abandoned = True
            reply.wait(START_WAIT)  # an action told to stop answers on the loop's next serving
            if not reply.finished:
                return False, f"{what} did not finish within {answer_wait:g} s"
        return reply.success, reply.message

    @property
    def pending(self) -> bool:
        """Whether requests wait (read without the lock: a cheap test on every tick)."""
        return bool(self._waiting)

    def serve(self) -> None:
        """On the step loop's thread: carry out every waiting request (those that come
        meanwhile wait for the next call). An action's :class:`~sim_server.core.errors.SimError`
        is its failed answer; any other error is logged and answered as an internal error."""
        if not self._waiting:
            return
        with self._lock:
            batch = list(self._waiting)
            self._waiting.clear()
            self._of_client.clear()
            for _, reply in batch:
                reply.started = True
        for action, reply in batch:
            try:
                action(reply)
            except SimError as error:
                reply.finish(False, str(error))
            except Exception as error:  # a bug must not take the loop down
                LOGGER.exception("a request from the live view failed")
                reply.finish(False, f"internal error: {type(error).__name__}: {one_line(str(error))}")

    def close(self) -> None:
        """Answer every waiting request (the view is closing) and refuse new ones."""
        with self._lock:
            self._closed = True
            batch = list(self._waiting)
            self._waiting.clear()
            self._of_client.clear()
        for _, reply in batch:
            reply.finish(False, "the live view closed before the request was served")
