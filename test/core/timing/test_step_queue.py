"""check_steps, the one check of a number of steps asked for (the ROS services' and the live
view's): from 1 to the limit, the world paused; where the number came unsigned, a huge one is
said to be perhaps a negative one."""

from __future__ import annotations

import pytest

from sim_server.core.errors import RequestError
from sim_server.core.limits import MAX_STEPS_PER_REQUEST
from sim_server.core.timing.step_queue import UNSIGNED_HINT, check_steps


@pytest.mark.parametrize("steps", [1, 10, MAX_STEPS_PER_REQUEST])
@pytest.mark.parametrize("unsigned", [False, True])
def test_steps_from_one_to_the_limit_are_taken_while_paused(steps: int, unsigned: bool) -> None:
    assert check_steps(steps, paused=True, unsigned=unsigned) is None


@pytest.mark.parametrize("steps", [0, -3, MAX_STEPS_PER_REQUEST + 1, 2**64 - 3])
@pytest.mark.parametrize("unsigned", [False, True])
def test_steps_out_of_range_are_refused_saying_the_range(steps: int, unsigned: bool) -> None:
    with pytest.raises(RequestError) as refused:
        check_steps(steps, paused=True, unsigned=unsigned)
    message = str(refused.value)
    assert message.startswith(f"steps must be from 1 to {MAX_STEPS_PER_REQUEST}, got {steps}")
    # Only a number beyond the limit that came unsigned may have been negative.
    assert (UNSIGNED_HINT in message) == (unsigned and steps > MAX_STEPS_PER_REQUEST)


def test_a_running_world_is_not_stepped() -> None:
    with pytest.raises(RequestError, match="the world is running: pause it before stepping it"):
        check_steps(5, paused=False)
    with pytest.raises(RequestError, match="steps must be from 1"):  # the range is checked first
        check_steps(0, paused=False)
