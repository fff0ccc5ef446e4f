"""Whether a publisher has subscribers, asked of the middleware at a bounded rate.

Topics nobody subscribes to are not published (building and sending a message costs far more
than the check), but the check itself costs a middleware call of about a microsecond and a half,
several times per step. :class:`SubscriberCheck` asks at most every
:data:`SUBSCRIBER_REFRESH_PERIOD` wall seconds; a new subscriber is noticed within that time,
well inside ROS discovery's own delay.
"""

from __future__ import annotations

import time
from typing import Any

#: Wall seconds a publisher's subscriber count is trusted before it is asked again.
SUBSCRIBER_REFRESH_PERIOD = 0.1


class SubscriberCheck:
    """Call it to learn whether ``publisher`` has at least one subscriber (refreshed every
    :data:`SUBSCRIBER_REFRESH_PERIOD` wall seconds).

    Args:
        publisher: an rclpy publisher.
    """

    __slots__ = ("publisher", "_listened", "_next_refresh")

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher
        self._listened = False
        self._next_refresh = 0.0

    def __call__(self) -> bool:
        now = time.monotonic()
        if now >= self._next_refresh:
            self._listened = self.publisher.get_subscription_count() > 0
            self._next_refresh = now + SUBSCRIBER_REFRESH_PERIOD
        return self._listened
