"""SubscriberCheck asks rclpy again only after its refresh period."""

from __future__ import annotations

from sim_server.ros import subscriber_check
from sim_server.ros.subscriber_check import SubscriberCheck, refresh_all


class CountingPublisher:
    def __init__(self) -> None:
        self.subscribers = 0
        self.asked = 0

    def get_subscription_count(self) -> int:
        self.asked += 1
        return self.subscribers


def test_refreshes_after_the_period(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(subscriber_check.time, "monotonic", lambda: now[0])
    publisher = CountingPublisher()
    listened = SubscriberCheck(publisher)
    assert not listened() and publisher.asked == 1
    publisher.subscribers = 1
    assert not listened() and publisher.asked == 1  # trusted until the period ends
    now[0] += subscriber_check.SUBSCRIBER_REFRESH_PERIOD
    assert listened() and publisher.asked == 2
    publisher.subscribers = 0
    now[0] += subscriber_check.SUBSCRIBER_REFRESH_PERIOD / 2
    assert listened()
    now[0] += subscriber_check.SUBSCRIBER_REFRESH_PERIOD
    assert not listened() and publisher.asked == 3


def test_refreshes_after_callbacks_were_served(monkeypatch) -> None:
    monkeypatch.setattr(subscriber_check.time, "monotonic", lambda: 100.0)
    publisher = CountingPublisher()
    listened = SubscriberCheck(publisher)
    assert not listened()
    publisher.subscribers = 1
    assert not listened()  # within the period, nothing served: trusted
    refresh_all()
    assert listened() and publisher.asked == 2


def test_several_publishers_any_listened(monkeypatch) -> None:
    now = [100.0]
    monkeypatch.setattr(subscriber_check.time, "monotonic", lambda: now[0])
    publishers = [CountingPublisher() for _ in range(3)]
    listened = SubscriberCheck(*publishers)
    assert not listened() and [p.asked for p in publishers] == [1, 1, 1]
    assert not listened() and [p.asked for p in publishers] == [1, 1, 1]  # one clock read, no middleware call
    publishers[2].subscribers = 1
    now[0] += subscriber_check.SUBSCRIBER_REFRESH_PERIOD
    assert listened()
    publishers[2].subscribers = 0
    publishers[0].subscribers = 2
    refresh_all()
    assert listened() and publishers[0].asked == 3 and publishers[1].asked == 2  # stops at the first listened
