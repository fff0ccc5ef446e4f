"""Easing functions of the Tween plugin: progress p in [0, 1] to the fraction of the motion done.

The names and formulas are those the reference accepts (Robert Penner's equations).
"""

from __future__ import annotations

import math
from typing import Callable

_BACK = 1.70158
_BACK_IN_OUT = _BACK * 1.525


def _bounce_out(p: float) -> float:
    if p < 1 / 2.75:
        return 7.5625 * p * p
    if p < 2 / 2.75:
        q = p - 1.5 / 2.75
        return 7.5625 * q * q + 0.75
    if p < 2.5 / 2.75:
        q = p - 2.25 / 2.75
        return 7.5625 * q * q + 0.9375
    q = p - 2.625 / 2.75
    return 7.5625 * q * q + 0.984375


def _in_out(p: float, ease_in: Callable[[float], float], ease_out: Callable[[float], float]) -> float:
    return 0.5 * ease_in(2 * p) if p < 0.5 else 0.5 * ease_out(2 * p - 1) + 0.5


def _elastic(p: float, body: Callable[[float], float]) -> float:
    if p <= 0.00001:
        return 0.0
    if p >= 0.999:
        return 1.0
    return body(p)


def _elastic_in_out(p: float) -> float:
    big = 2 * p
    q = big - 1
    wave = math.sin((q - 0.1125) * 2 * math.pi / 0.45)
    if big < 1:
        return -0.5 * 2 ** (10 * q) * wave
    return 0.5 * 2 ** (-10 * q) * wave + 1


EASINGS: dict[str, Callable[[float], float]] = {
    "linear": lambda p: p,
    "quadraticIn": lambda p: p * p,
    "quadraticOut": lambda p: -p * (p - 2),
    "quadraticInOut": lambda p: _in_out(p, lambda q: q * q, lambda q: -q * (q - 2)),
    "cubicIn": lambda p: p**3,
    "cubicOut": lambda p: (p - 1) ** 3 + 1,
    "cubicInOut": lambda p: _in_out(p, lambda q: q**3, lambda q: (q - 1) ** 3 + 1),
    "quarticIn": lambda p: p**4,
    "quarticOut": lambda p: -((p - 1) ** 4 - 1),
    "quarticInOut": lambda p: _in_out(p, lambda q: q**4, lambda q: -((q - 1) ** 4 - 1)),
    "quinticIn": lambda p: p**5,
    "quinticOut": lambda p: (p - 1) ** 5 + 1,
    "quinticInOut": lambda p: _in_out(p, lambda q: q**5, lambda q: (q - 1) ** 5 + 1),
    "exponentialIn": lambda p: 2 ** (10 * (p - 1)),
    "exponentialOut": lambda p: 1 - 2 ** (-10 * p),
    "exponentialInOut": lambda p: 2 ** (10 * (2 * p - 1)) / 2 if p < 0.5 else (2 - 2 ** (-10 * (2 * p - 1))) / 2,
    "circularIn": lambda p: -(math.sqrt(max(0.0, 1 - p * p)) - 1),
    "circularOut": lambda p: math.sqrt(max(0.0, 1 - (p - 1) ** 2)),
    "circularInOut": lambda p: _in_out(
        p, lambda q: -(math.sqrt(max(0.0, 1 - q * q)) - 1), lambda q: math.sqrt(max(0.0, 1 - (q - 1) ** 2))
    ),
    "backIn": lambda p: p * p * ((_BACK + 1) * p - _BACK),
    "backOut": lambda p: (p - 1) ** 2 * ((_BACK + 1) * (p - 1) + _BACK) + 1,
    "backInOut": lambda p: _in_out(
        p,
        lambda q: q * q * ((_BACK_IN_OUT + 1) * q - _BACK_IN_OUT),
        lambda q: (q - 1) ** 2 * ((_BACK_IN_OUT + 1) * (q - 1) + _BACK_IN_OUT) + 1,
    ),
    "elasticIn": lambda p: _elastic(p, lambda x: -(2 ** (10 * (x - 1))) * math.sin((x - 1 - 0.075) * 2 * math.pi / 0.3)),
    "elasticOut": lambda p: _elastic(p, lambda x: 2 ** (-10 * x) * math.sin((x - 0.075) * 2 * math.pi / 0.3) + 1),
    "elasticInOut": lambda p: _elastic(p, _elastic_in_out),
    "bounceIn": lambda p: 1 - _bounce_out(1 - p),
    "bounceOut": _bounce_out,
    "bounceInOut": lambda p: 0.5 * (1 - _bounce_out(1 - 2 * p)) if p < 0.5 else 0.5 * _bounce_out(2 * p - 1) + 0.5,
}
