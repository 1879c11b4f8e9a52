"""Intervals: Wilson score bounds, and a paired difference of two accuracies."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (0, 1) when n == 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_lower(successes: int, n: int, z: float = Z95) -> float:
    return wilson(successes, n, z)[0] if n > 0 else 0.0


def paired_difference(a: list[bool], b: list[bool], z: float = Z95) -> tuple[float, float, float]:
    """Difference of two accuracies on the same questions (a - b) and its 95% interval.

    Newcombe's method 10 (Wilson-based, for paired binary outcomes), which
    stays inside [-1, 1] and behaves at small n.
    """
    n = len(a)
    if n == 0 or n != len(b):
        return 0.0, -1.0, 1.0
    n11 = sum(1 for x, y in zip(a, b) if x and y)
    n10 = sum(1 for x, y in zip(a, b) if x and not y)
    n01 = sum(1 for x, y in zip(a, b) if y and not x)
    n00 = n - n11 - n10 - n01
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    d = p1 - p2
    l1, u1 = wilson(n11 + n10, n, z)
    l2, u2 = wilson(n11 + n01, n, z)
    denom = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    if denom == 0:
        phi = 0.0
    else:
        phi = (n11 * n00 - n10 * n01) / math.sqrt(denom)
    dl = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    du = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return d, max(-1.0, d - dl), min(1.0, d + du)


def fmt_pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def fmt_interval(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    acc = k / n if n else 0.0
    return f"{fmt_pct(acc)} ({k}/{n}, 95% CI {fmt_pct(lo)}–{fmt_pct(hi)})"
