"""Whether a publisher has subscribers, asked of the middleware at a bounded rate.

Topics nobody subscribes to are not published (building and sending a message costs far more
than the check), but the check itself costs a middleware call of one to three microseconds, for
several publishers per robot (a thousand robots asking ten times a second spent a tenth of the
server's time on it). :class:`SubscriberCheck` asks again after
:data:`SUBSCRIBER_REFRESH_PERIOD` wall seconds, or as soon as the server has served a ROS
callback since it last asked (:func:`refresh_all`): a client that subscribes, waits for the
match and then calls ``step_world`` gets every message of those steps; a subscriber that just
listens gets its first message at most that period after the match.
"""

from __future__ import annotations

import time
from typing import Any

#: Wall seconds a publisher's subscriber count is trusted before it is asked again.
SUBSCRIBER_REFRESH_PERIOD = 0.25

_generation = 0


def refresh_all() -> None:
    """Make every check ask again at its next use (call it after serving ROS callbacks)."""
    global _generation
    _generation += 1


class SubscriberCheck:
    """Call it to learn whether ``publisher`` (or any of ``more``) has at least one subscriber
    (asked again after :data:`SUBSCRIBER_REFRESH_PERIOD` wall seconds or a :func:`refresh_all`).
    One check over all the topics of a robot makes the usual answer, nobody, one call.

    Args:
        publisher: an rclpy publisher.
        more: more publishers.
    """

    __slots__ = ("publishers", "_listened", "_next_refresh", "_generation")

    def __init__(self, publisher: Any, *more: Any) -> None:
        self.publishers = (publisher, *more)
        self._listened = False
        self._next_refresh = 0.0
        self._generation = -1

    def __call__(self) -> bool:
        now = time.monotonic()
        if now >= self._next_refresh or self._generation != _generation:
            self._listened = any(publisher.get_subscription_count() > 0 for publisher in self.publishers)
            self._next_refresh = now + SUBSCRIBER_REFRESH_PERIOD
            self._generation = _generation
        return self._listened
