"""Dimensions: a constant (int), a symbol (str) or unknown (None).

Symbols are kept as canonical strings so that the same size written twice
compares equal: products become sorted `a*b` factors with an integer
coefficient in front; anything else becomes an opaque expression string.
An unknown never equals anything and never blocks.
"""

from __future__ import annotations

import re
from functools import lru_cache

Dim = int | str | None


def is_const(d: Dim) -> bool:
    return type(d) is int or (isinstance(d, int) and not isinstance(d, bool))


def is_sym(d: Dim) -> bool:
    return isinstance(d, str)


def same(a: Dim, b: Dim) -> bool | None:
    """True/False when decidable, None when an unknown is involved."""
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a == b
    if is_sym(a) and is_sym(b):
        return True if a == b else None
    # a constant against a symbol: the symbol may take that value
    return None


def differ(a: Dim, b: Dim) -> bool:
    """Known to be different (safe to block on)."""
    return is_const(a) and is_const(b) and a != b


@lru_cache(maxsize=8192, typed=True)
def _factors(d: str) -> tuple[int, list[str]]:
    # cached: callers must not mutate the list (none does)
    coef = 1
    syms: list[str] = []
    if "(" in d or "+" in d or "-" in d[1:] or "/" in d:
        return 1, [d]
    for part in d.split("*"):
        if part.lstrip("-").isdigit():
            coef *= int(part)
        else:
            syms.append(part)
    return coef, syms


def _compose(coef: int, syms: list[str]) -> Dim:
    if not syms:
        return coef
    body = "*".join(sorted(syms))
    return body if coef == 1 else f"{coef}*{body}"


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a * b
    return _mul_sym(a, b)


@lru_cache(maxsize=8192, typed=True)
def _mul_sym(a: Dim, b: Dim) -> Dim:
    if a == 0 or b == 0:
        return 0
    ca, sa = (a, []) if is_const(a) else _factors(a)
    cb, sb = (b, []) if is_const(b) else _factors(b)
    return _compose(ca * cb, sa + sb)


def prod(dims) -> Dim:
    if len(dims) > _LONG:
        out = _prod_long(dims)
        if out is not _SLOW:
            return out
    out: Dim = 1
    for d in dims:
        out = mul(out, d)
        if out is None:
            return None
    return out


_LONG = 16
_SLOW = object()
# a product of names with an integer in front, as `_compose` writes it: `_factors` splits it exactly
_CLEAN_PRODUCT = re.compile(r"(?:-?[0-9]+\*)?[A-Za-z_][A-Za-z0-9_]*(?:\*[A-Za-z_][A-Za-z0-9_]*)*")


def _prod_long(dims):
    """The product of a long shape in one pass, equal to multiplying one dim at a time (which
    re-reads the growing product at each step: quadratic in the rank, hours for 100,000 dims).
    _SLOW when a dim is an expression whose reading depends on the order of the steps."""
    coef = 1
    syms: list[str] = []
    zero = False
    for d in dims:
        if d is None:
            return None
        if type(d) is int:
            zero = zero or d == 0
            coef *= d
        elif isinstance(d, str) and _CLEAN_PRODUCT.fullmatch(d):
            c, s = _factors(d) if len(d) < 64 else _factors.__wrapped__(d)  # long strings stay out of the cache
            coef *= c
            syms.extend(s)
        else:
            return _SLOW
    return 0 if zero else _compose(coef, syms)


def add(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a + b
    if b == 0:
        return a
    if a == 0:
        return b
    if is_const(b):
        return f"({a}+{b})" if b > 0 else f"({a}-{-b})"
    if is_const(a):
        return add(b, a)
    ca, sa = _factors(a)
    cb, sb = _factors(b)
    if sorted(sa) == sorted(sb) and len(sa) and not (len(sa) == 1 and sa[0].startswith("(")):
        return _compose(ca + cb, sa)  # like terms: 3*B + 5*B = 8*B
    return f"({'+'.join(sorted([a, b]))})"


def sub(a: Dim, b: Dim) -> Dim:
    if is_const(b):
        return add(a, -b)
    if a is None or b is None:
        return None
    if a == b:
        return 0
    return f"({a}-{b})"


def floordiv(a: Dim, b: int) -> Dim:
    if a is None:
        return None
    if is_const(a):
        return a // b
    if b == 1:
        return a
    coef, syms = _factors(a)
    if coef % b == 0 and syms != [a]:
        return _compose(coef // b, syms)
    # fully parenthesised, so that a later product cannot change its meaning
    return f"(({a})//{b})"


def exact_div(a: Dim, b: Dim) -> Dim:
    """a / b where the caller knows it divides (a reshape's -1)."""
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a // b if b and a % b == 0 else None
    ca, sa = (a, []) if is_const(a) else _factors(a)
    cb, sb = (b, []) if is_const(b) else _factors(b)
    rest = list(sa)
    for s in sb:
        if s in rest:
            rest.remove(s)
        else:
            return None
    if cb == 0 or ca % cb:
        return None
    return _compose(ca // cb, rest)


def conv_out(size: Dim, kernel: int, stride: int = 1, padding: int = 0, dilation: int = 1) -> Dim:
    """torch's output length of a convolution or pooling window."""
    if size is None:
        return None
    span = dilation * (kernel - 1) + 1
    if is_const(size):
        return (size + 2 * padding - span) // stride + 1
    off = 2 * padding - span
    if stride == 1:
        return add(size, off + 1)
    return add(floordiv(add(size, off), stride), 1)


def fmt(d: Dim) -> str:
    return "?" if d is None else str(d)


def fmt_shape(shape) -> str:
    if shape is None:
        return "[?…]"
    return "[" + ", ".join(fmt(d) for d in shape) + "]"


def substitute(d: Dim, env: dict[str, int]) -> Dim:
    """Replace symbols by sizes (for cost quotes); expressions are evaluated safely."""
    if not is_sym(d):
        return d
    if d in env:
        return env[d]
    coef, syms = _factors(d)
    if syms != [d]:
        out = coef
        for s in syms:
            v = substitute(s, env)
            if not is_const(v):
                return None
            out *= v
        return out
    return _eval_expr(d, env)


def _eval_expr(expr: str, env: dict[str, int]) -> Dim:
    import ast

    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in env:
                return env[n.id]
            raise KeyError(n.id)
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, ast.FloorDiv):
                return a // b
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise ValueError("unsupported")

    try:
        return int(ev(tree))
    except (KeyError, ValueError, ZeroDivisionError, TypeError):
        return None


# ---- conditions on symbolic sizes -----------------------------------------------------------
# When a symbol meets a constant (a Linear(768) fed a width T) or another symbol, the design runs
# only for some sizes. A `Condition` says which; `holds` decides it under declared sizes, and
# `satisfiable` whether any size at all satisfies it (none: the design can never run).

import re as _re  # noqa: E402 - these functions are an addition to the module above
from dataclasses import dataclass as _dataclass  # noqa: E402

_OPERATORS = _re.compile(r"[()+*/\s]+|(?<=[\w)])-")


@_dataclass(frozen=True)
class Condition:
    """`lhs = rhs` (kind "eq"), `lhs = rhs or either is 1` (kind "broadcast"), `lhs <= rhs` (kind "le"),
    `lhs` a multiple of `rhs` (kind "multiple")."""

    kind: str
    lhs: Dim
    rhs: Dim

    def text(self) -> str:
        a, b = fmt(self.lhs), fmt(self.rhs)
        if self.kind == "le":
            return f"{a} <= {b}"
        if self.kind == "multiple":
            return f"{a} is a multiple of {b}"
        if self.kind == "expand":
            return f"{a} = {b} (or {a} = 1)"
        if self.kind == "broadcast":
            ones = " or ".join(f"{x} = 1" for x in (a, b) if not x.lstrip("-").isdigit())
            return f"{a} = {b}" + (f" (or {ones})" if ones else "")
        return f"{a} = {b}"

    def check(self, a: int, b: int) -> bool:
        if self.kind == "le":
            return a <= b
        if self.kind == "multiple":
            return b != 0 and a % b == 0
        if self.kind == "expand":
            return a == b or a == 1
        if self.kind == "broadcast":
            return a == b or a == 1 or b == 1
        return a == b


def condition(kind: str, a: Dim, b: Dim) -> Condition | bool | None:
    """True / False when the sizes decide it, None when an unknown is involved, else the Condition."""
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return Condition(kind, a, b).check(a, b)
    if a == b:
        return True
    return Condition(kind, a, b)


def symbols_of(d: Dim) -> list[str]:
    """The symbols a size is written in (in order of appearance)."""
    if not is_sym(d):
        return []
    if _OPERATORS.search(d) is None:
        return [d]
    out = []
    for part in _OPERATORS.split(d):
        part = part.strip()
        if part and not part.lstrip("-").isdigit() and part not in out:
            out.append(part)
    return out


def holds(cond: Condition, env: dict) -> bool | None:
    """Whether the condition holds at the sizes `env` gives its symbols (None: some are not given)."""
    a, b = substitute(cond.lhs, env), substitute(cond.rhs, env)
    if not (is_const(a) and is_const(b)):
        return None
    return cond.check(a, b)


def _candidates(cond: Condition) -> list[int]:
    consts = {1, 2, 3, 4, 8, 16, 64}
    for side in (cond.lhs, cond.rhs):
        if is_const(side):
            consts.add(side)
        else:
            for tok in _re.findall(r"\d+", side):
                consts.add(int(tok))
    out = set()
    for c in consts:
        c = abs(c)
        if c > 10 ** 9:
            continue
        for k in (1, 2, 3, 4, 8, 16):
            for v in (c * k, c // k, c + k, c - k):
                if 1 <= v <= 10 ** 9:
                    out.add(v)
    return sorted(out)


def satisfiable(cond: Condition, fixed: dict | None = None) -> bool:
    """Whether some positive sizes of its free symbols satisfy the condition (searched over the sizes
    that could: 1..64 and the constants it names, their multiples and fractions)."""
    fixed = fixed or {}
    syms = [s for s in dict.fromkeys(symbols_of(cond.lhs) + symbols_of(cond.rhs)) if s not in fixed]
    if not syms:
        return holds(cond, fixed) is not False
    values = sorted(set(range(1, 65)) | set(_candidates(cond)))
    if len(syms) == 1:
        env = dict(fixed)
        for v in values:
            env[syms[0]] = v
            if holds(cond, env) is not False:
                return True
        return False
    small = [v for v in values if v <= 16] + [v for v in values if v > 16][:24]
    import itertools

    for combo in itertools.islice(itertools.product(small, repeat=len(syms)), 20000):
        env = dict(fixed)
        env.update(zip(syms, combo))
        if holds(cond, env) is not False:
            return True
    return False
