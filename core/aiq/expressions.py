"""Symbolic regression targets: sampled, written, read back, measured.

The study (ArchitectureIQ, profiles v1-v2.2) draws its regression targets as
small expression trees over ``x`` (univariate) or ``x0..x{n-1}``
(multivariate) on the domain ``[0, 1]``: leaves are the input or a constant
``k/6`` (``k`` in -12..12), unary nodes are ``sin(2*pi*u)``, ``cos(2*pi*u)``,
``tanh(2*u)``, ``|u|``, ``u**2``, ``u**3``, binary nodes ``+ - * /`` with a
protected division (the denominator is kept at least 0.1 away from 0). A
drawn tree is kept when it is finite on a grid, has a nonlinear node, spans
a range of at least 0.4 and stays within 5 (scaled by sqrt(n) for n
inputs). Targets are not normalised and carry no noise. This module is our
own implementation of that distribution; the study's published expression
*text* is what a bundle carries, so the parser here reads it back (without
``eval``: a small grammar of numbers, variables, the five operators and the
functions above) to rebuild tensors and to measure two features: the
target's **frequency** (the largest number of periods per unit of the
input that any sine or cosine goes through on the domain) and its
**degree** (the polynomial degree, counting a sine, cosine, tanh or abs of
an input-dependent argument as one).

torch is imported inside the functions that make tensors.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

TWO_PI = 6.283185307179586
CONSTANTS = tuple(round(k / 6, 4) for k in range(-12, 13))
UNARY = ("sin", "cos", "tanh", "abs", "square", "cube")
BINARY = ("+", "-", "*", "/")
PERIODIC = ("sin", "cos")
MAX_EXPRESSION_CHARS = 4000
MAX_DEPTH = 64


class ExpressionError(ValueError):
    """An expression the grammar does not read; one line."""


@dataclass(frozen=True)
class Node:
    """kind: 'x' (value = input index), 'const', a unary name, or a binary operator."""

    kind: str
    value: float = 0.0
    left: Node | None = None
    right: Node | None = None

    def children(self) -> tuple[Node, ...]:
        return tuple(c for c in (self.left, self.right) if c is not None)

    def variables(self) -> set[int]:
        if self.kind == "x":
            return {int(self.value)}
        out: set[int] = set()
        for c in self.children():
            out |= c.variables()
        return out

    def nonlinear(self) -> bool:
        if self.kind in UNARY or self.kind == "/":
            return True
        return any(c.nonlinear() for c in self.children())


# --------------------------------------------------------------------------- evaluation

def evaluate(node: Node, x):
    """NODE at the points X ([N, n] tensor, float64 advised); a [N] tensor."""
    import torch

    k = node.kind
    if k == "x":
        return x[:, int(node.value)]
    if k == "const":
        return torch.full((x.shape[0],), float(node.value), dtype=x.dtype)
    a = evaluate(node.left, x)
    if k == "sin":
        return torch.sin(TWO_PI * a)
    if k == "cos":
        return torch.cos(TWO_PI * a)
    if k == "tanh":
        return torch.tanh(2 * a)
    if k == "abs":
        return a.abs()
    if k == "square":
        return a * a
    if k == "cube":
        return a * a * a
    if k == "pow":  # a read-back power other than 2 or 3
        return a.pow(float(node.value))
    b = evaluate(node.right, x)
    if k == "+":
        return a + b
    if k == "-":
        return a - b
    if k == "*":
        return a * b
    if k == "/":
        sign = torch.where(b + 1e-12 >= 0, torch.ones_like(b), -torch.ones_like(b))
        return a / (b.abs().clamp_min(0.1) * sign)
    raise ExpressionError(f"unknown node {k!r}")


# --------------------------------------------------------------------------- writing

def _num(v: float) -> str:
    if abs(v - round(v)) < 1e-9:
        return str(int(round(v)))
    return f"{v:.4f}".rstrip("0").rstrip(".")


_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def render(node: Node, *, univariate: bool = False, parent: int = 0) -> str:
    """Infix text in the study's notation (``sin(6.283185307179586*x)``, ``(u)**2``)."""
    k = node.kind
    if k == "x":
        return "x" if univariate else f"x{int(node.value)}"
    if k == "const":
        return _num(node.value)
    if k in UNARY or k == "pow":
        inner = render(node.left, univariate=univariate, parent=99)
        return {"sin": f"sin({TWO_PI}*{inner})", "cos": f"cos({TWO_PI}*{inner})", "tanh": f"tanh(2*{inner})",
                "abs": f"abs({inner})", "square": f"({inner})**2", "cube": f"({inner})**3",
                "pow": f"({inner})**{_num(node.value)}"}[k]
    prec = _PREC[k]
    text = (f"{render(node.left, univariate=univariate, parent=prec)} {k} "
            f"{render(node.right, univariate=univariate, parent=prec + 1)}")
    return f"({text})" if prec < parent else text


# --------------------------------------------------------------------------- sampling

def _leaf(rng: random.Random, dims: int) -> Node:
    if rng.random() < 0.55:
        return Node("x", rng.randrange(dims) if dims > 1 else 0)
    return Node("const", rng.choice(CONSTANTS))


def _tree(rng: random.Random, max_depth: int, depth: int, dims: int) -> Node:
    if depth >= max_depth:
        return _leaf(rng, dims)
    roll = rng.random()
    if depth == 0 or roll < 0.45:
        return Node(rng.choice(BINARY), left=_tree(rng, max_depth, depth + 1, dims),
                    right=_tree(rng, max_depth, depth + 1, dims))
    if roll < 0.75:
        return Node(rng.choice(UNARY), left=_tree(rng, max_depth, depth + 1, dims))
    return _leaf(rng, dims)


def _coordinate_term(rng: random.Random, depth: int, i: int) -> Node:
    """A nonlinear term that depends on x_i (the multivariate targets are sums of these)."""
    x = Node("x", i)
    if depth <= 1:
        return Node(rng.choice(UNARY), left=x)
    roll = rng.random()
    if roll < 0.45:
        inner = _coordinate_term(rng, depth - 1, i) if rng.random() < 0.4 else x
        return Node(rng.choice(UNARY), left=inner)
    if roll < 0.8:
        left = Node(rng.choice(UNARY), left=x) if rng.random() < 0.65 else x
        return Node(rng.choice(BINARY), left=left, right=Node("const", rng.choice(CONSTANTS)))
    return Node(rng.choice(UNARY), left=_coordinate_term(rng, depth - 1, i))


def _interaction(rng: random.Random, depth: int, i: int, j: int) -> Node:
    xi, xj = Node("x", i), Node("x", j)
    if rng.random() < 0.55:
        if rng.random() < 0.5:
            xi = Node(rng.choice(UNARY), left=xi)
        if rng.random() < 0.5:
            xj = Node(rng.choice(UNARY), left=xj)
        return Node("*" if rng.random() < 0.7 else rng.choice(BINARY), left=xi, right=xj)
    if depth > 1 and rng.random() < 0.5:
        return Node("+", left=_coordinate_term(rng, depth - 1, i), right=_coordinate_term(rng, depth - 1, j))
    return Node("*", left=Node("sin", left=xi), right=Node("cos", left=xj))


def _multivariate_tree(rng: random.Random, max_depth: int, dims: int) -> Node:
    depth = max(2, max_depth)
    terms = [_coordinate_term(rng, depth, i) for i in range(dims)]
    order = list(range(dims))
    rng.shuffle(order)
    n_inter = 1 if dims == 2 else rng.randint(1, min(2, dims - 1))
    for k in range(n_inter):
        i, j = order[k % dims], order[(k + 1) % dims]
        terms.append(_interaction(rng, depth, i, j))
    acc = terms[0]
    for t in terms[1:]:
        acc = Node("+", left=acc, right=t)
    return acc


def acceptable(node: Node, dims: int, domain: tuple[float, float] = (0.0, 1.0), points: int = 128) -> bool:
    """The study's acceptance test for a drawn target (thresholds scaled by sqrt(dims))."""
    import torch

    if not node.nonlinear():
        return False
    if dims > 1 and node.variables() != set(range(dims)):
        return False
    lo, hi = domain
    if dims == 1:
        x = torch.linspace(lo, hi, points, dtype=torch.float64).unsqueeze(1)
    else:
        g = torch.Generator().manual_seed(0)
        x = torch.rand(64, dims, generator=g, dtype=torch.float64) * (hi - lo) + lo
    y = evaluate(node, x)
    if not bool(torch.isfinite(y).all()):
        return False
    scale = math.sqrt(dims)
    if float(y.max() - y.min()) < 0.4 * scale or float(y.abs().max()) > 5.0 * scale:
        return False
    return float((y.abs() <= 4.5 * scale).double().mean()) >= 0.95


def sample_target(seed: int, dims: int = 1, *, max_depth: int = 3, retries: int = 400) -> tuple[Node, int]:
    """A target drawn from SEED: (tree, retries used)."""
    rng = random.Random(f"target:{dims}:{seed}")
    for attempt in range(retries):
        node = _tree(rng, max_depth, 0, 1) if dims == 1 else _multivariate_tree(rng, max_depth, dims)
        if acceptable(node, dims):
            return node, attempt
    raise ExpressionError(f"no acceptable target after {retries} draws (seed {seed}, {dims} inputs)")


# --------------------------------------------------------------------------- reading back

_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|(\*\*|[-+*/(),^])|([A-Za-z_][A-Za-z0-9_]*))")
_FUNCS = {"sin", "cos", "tanh", "abs", "exp", "sqrt", "log"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"cannot read expression at {text[pos:pos + 12]!r}")
        num_text = m.group(0).strip()
        if m.group(1) is not None:
            out.append(("num", num_text))
        elif m.group(2) is not None:
            out.append(("op", "**" if m.group(2) in ("**", "^") else m.group(2)))
        else:
            out.append(("name", m.group(3)))
        pos = m.end()
    return out


class _Parser:
    """expr := term (('+'|'-') term)* ; term := unary (('*'|'/') unary)* ;
    unary := '-' unary | power ; power := atom ('**' unary)? ; atom := num | var | func '(' expr ')' | '(' expr ')'."""

    def __init__(self, text: str):
        if len(text) > MAX_EXPRESSION_CHARS:
            raise ExpressionError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str | None = None, value: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t is None or (kind and t[0] != kind) or (value and t[1] != value):
            want = value or kind or "more"
            raise ExpressionError(f"expected {want!r}, found {t[1] if t else 'the end'!r}")
        self.i += 1
        return t

    def parse(self) -> Node:
        node = self.expr()
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()[1]!r}")
        return node

    def _nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}")

    def expr(self) -> Node:
        self._nest()
        node = self.term()
        while (t := self.peek()) in (("op", "+"), ("op", "-")):
            self.i += 1
            node = Node(t[1], left=node, right=self.term())
        self.depth -= 1
        return node

    def term(self) -> Node:
        node = self.unary()
        while (t := self.peek()) and t[0] == "op" and t[1] in ("*", "/"):
            self.i += 1
            node = Node(t[1], left=node, right=self.unary())
        return node

    def unary(self) -> Node:
        t = self.peek()
        if t == ("op", "-"):
            self.i += 1
            self._nest()
            inner = self.unary()
            self.depth -= 1
            if inner.kind == "const":
                return Node("const", -inner.value)
            return Node("*", left=Node("const", -1.0), right=inner)
        if t == ("op", "+"):
            self.i += 1
            return self.unary()
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self.peek() == ("op", "**"):
            self.i += 1
            exp = self.unary()
            if exp.kind != "const":
                raise ExpressionError("only constant powers are read")
            p = exp.value
            if p == 2:
                return Node("square", left=base)
            if p == 3:
                return Node("cube", left=base)
            return Node("pow", p, left=base)
        return base

    def atom(self) -> Node:
        t = self.take()
        if t[0] == "num":
            return Node("const", float(t[1]))
        if t == ("op", "("):
            self._nest()
            node = self.expr()
            self.depth -= 1
            self.take("op", ")")
            return node
        if t[0] == "name":
            name = t[1]
            if name == "x":
                return Node("x", 0)
            if re.fullmatch(r"x\d{1,3}", name):
                return Node("x", int(name[1:]))
            if name == "pi":
                return Node("const", math.pi)
            if name in _FUNCS:
                self.take("op", "(")
                self._nest()
                arg = self.expr()
                self.depth -= 1
                self.take("op", ")")
                return _function(name, arg)
            raise ExpressionError(f"unknown name {name!r}")
        raise ExpressionError(f"unexpected {t[1]!r}")


def _function(name: str, arg: Node) -> Node:
    """sin/cos in the study's notation carry 2*pi inside: sin(2*pi*u) is node sin(u)."""
    if name in PERIODIC:
        inner = _strip_factor(arg, TWO_PI)
        return Node(name, left=inner if inner is not None else Node("*", left=Node("const", 1 / TWO_PI), right=arg))
    if name == "tanh":
        inner = _strip_factor(arg, 2.0)
        return Node("tanh", left=inner if inner is not None else Node("*", left=Node("const", 0.5), right=arg))
    if name == "abs":
        return Node("abs", left=arg)
    raise ExpressionError(f"function {name!r} is not one the study's targets use")


def _strip_factor(arg: Node, factor: float) -> Node | None:
    if arg.kind == "*" and arg.left is not None and arg.left.kind == "const" and abs(arg.left.value - factor) < 1e-9:
        return arg.right
    return None


def parse(text: str) -> Node:
    """Read an expression in the study's notation; ExpressionError (one line) when it cannot."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression")
    return _Parser(text).parse()


# --------------------------------------------------------------------------- features

def degree(node: Node) -> int:
    """Polynomial degree; a periodic, tanh or abs of an input-dependent argument counts as one."""
    k = node.kind
    if k == "x":
        return 1
    if k == "const":
        return 0
    if k in ("sin", "cos", "tanh"):
        return 1 if node.left.variables() else 0
    if k == "abs":
        return degree(node.left)
    if k == "square":
        return 2 * degree(node.left)
    if k == "cube":
        return 3 * degree(node.left)
    if k == "pow":
        return int(round(abs(node.value))) * degree(node.left)
    a, b = degree(node.left), degree(node.right)
    if k in ("+", "-"):
        return max(a, b)
    return a + b


def _scalar(node: Node, point: list[float]) -> float:
    """NODE at one point (pure Python, for the features: no torch on the knowledge base's path)."""
    k = node.kind
    if k == "x":
        i = int(node.value)
        return point[i] if i < len(point) else math.nan
    if k == "const":
        return float(node.value)
    a = _scalar(node.left, point)
    try:
        if k == "sin":
            return math.sin(TWO_PI * a)
        if k == "cos":
            return math.cos(TWO_PI * a)
        if k == "tanh":
            return math.tanh(2 * a)
        if k == "abs":
            return abs(a)
        if k == "square":
            return a * a
        if k == "cube":
            return a * a * a
        if k == "pow":
            return a ** float(node.value)
        b = _scalar(node.right, point)
        if k == "+":
            return a + b
        if k == "-":
            return a - b
        if k == "*":
            return a * b
        if k == "/":
            return a / (max(abs(b), 0.1) * (1.0 if b + 1e-12 >= 0 else -1.0))
    except (OverflowError, ValueError, ZeroDivisionError, TypeError):
        return math.nan
    raise ExpressionError(f"unknown node {k!r}")


def frequency(node: Node, dims: int = 1, domain: tuple[float, float] = (0.0, 1.0), points: int = 129) -> float:
    """Largest periods per unit input of any sine / cosine on the domain (0: none).

    Measured, not read off coefficients: for each periodic node, the largest
    slope of its argument along any input over a grid, so ``sin(2*pi*(x/0.5))``
    counts 2 and ``cos(2*pi*x**2)`` counts 2 (its argument's slope at x = 1).
    """
    periodic = [n for n in _walk(node) if n.kind in PERIODIC and n.left is not None and n.left.variables()]
    if not periodic:
        return 0.0
    lo, hi = domain
    if dims == 1:
        grid = [[lo + (hi - lo) * t / (points - 1)] for t in range(points)]
    else:
        rng = random.Random(0)
        grid = [[rng.uniform(lo, hi) for _ in range(dims)] for _ in range(points)]
    best, h = 0.0, 1e-4
    for n in periodic:
        for i in sorted(n.left.variables()):
            if i >= dims:
                continue
            for p in grid:
                up, down = list(p), list(p)
                up[i] += h
                down[i] -= h
                slope = abs(_scalar(n.left, up) - _scalar(n.left, down)) / (2 * h)
                if math.isfinite(slope):
                    best = max(best, slope)
    return round(best, 3)


def _walk(node: Node):
    yield node
    for c in node.children():
        yield from _walk(c)


@lru_cache(maxsize=4096)
def _features(expression: str, dims: int, lo: float, hi: float) -> tuple:
    node = parse(expression)
    periodic = sum(1 for n in _walk(node) if n.kind in PERIODIC and n.left.variables())
    return (("target_freq", frequency(node, dims, (lo, hi))), ("target_degree", degree(node)),
            ("target_periodic", periodic))


def target_features(expression: Any, dims: int = 1, domain: Any = (0.0, 1.0)) -> dict:
    """{"target_freq", "target_degree", "target_periodic"} parsed from EXPRESSION; {} when unreadable."""
    try:
        return dict(_features(str(expression), int(dims), float(domain[0]), float(domain[1])))
    except (ExpressionError, TypeError, ValueError, IndexError, RecursionError):
        return {}
