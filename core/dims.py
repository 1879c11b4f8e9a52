"""Dimensions: a constant (int), a symbol (str) or unknown (None).

A symbolic size is kept as a canonical string so that the same size written twice
compares equal.  Inside, the string is an exact polynomial over named symbols with
rational coefficients (`B*64` is written `64*B`, `B*T`, `T/2`, `(H-1)`), so that sums,
products and exact quotients of sizes stay exact and comparable; anything a
polynomial cannot say (a floor division that does not divide, `ceil(...)`) becomes an
opaque atom such as `((H-1)//2)` that still multiplies, adds and substitutes.  An
unknown never equals anything and never blocks.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)
if TYPE_CHECKING:
    from typing import TypeGuard

Dim = int | str | None

_ONE = ()  # the monomial of a constant term


def is_const(d: Dim) -> TypeGuard[int]:
    return type(d) is int or (isinstance(d, int) and not isinstance(d, bool))


def is_sym(d: Dim) -> bool:
    return isinstance(d, str)


# ---------------------------------------------------------------- polynomials
# A polynomial is a tuple of (monomial, coefficient) pairs sorted by monomial; a monomial is a
# sorted tuple of atom names (with repeats: B*B).  Tuples, so that parsed strings can be cached.

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9.]*)|(//|[-+*/(),]))")


class _Opaque(Exception):
    pass


def _tokens(s: str):
    out, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None:
            if s[pos:].strip() == "":
                break
            raise _Opaque(s)
        kind = "num" if m.group(1) else "name" if m.group(2) else "op"
        out.append((kind, m.group(m.lastindex), m.start(m.lastindex), m.end()))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over + - * / // ( ) of numbers and names; a piece that is not a
    polynomial (// that does not divide, a call, division by a symbol) becomes an atom whose
    name is its own text, wrapped in parentheses so that it stays one factor."""

    def __init__(self, s):
        self.s, self.toks, self.i = s, _tokens(s), 0

    def peek(self):
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def parse(self):
        p = self.expr()
        if self.i != len(self.toks):
            raise _Opaque(self.s)
        return p

    def expr(self):
        p = self.term()
        if self.peek() not in ("+", "-"):
            return p
        terms = dict(p)  # a sum of n terms is gathered once, not re-sorted at each addition (n^2)
        while self.peek() in ("+", "-"):
            sign = Fraction(1) if self.take()[1] == "+" else Fraction(-1)
            for m, c in self.term():
                terms[m] = terms.get(m, 0) + sign * c
        return _norm(terms)

    def term(self):
        p = self.factor()
        text = None  # once opaque: the canonical text of what is read so far
        while self.peek() in ("*", "/", "//"):
            op = self.take()[1]
            q = self.factor()
            if text is not None:
                text += op + _wrap(_dim(q))
            elif op == "*":
                p = _pmul(p, q)
            elif op == "/" and _pconst(q) not in (None, 0):
                p = _pscale(p, 1 / _pconst(q))
            else:
                text = _wrap(_dim(p)) + op + _wrap(_dim(q))
        return p if text is None else _patom("(" + text + ")")

    def factor(self):
        if self.i >= len(self.toks):
            raise _Opaque(self.s)
        kind, text, start, _ = self.take()
        if text == "-":
            return _pscale(self.factor(), Fraction(-1))
        if text == "+":
            return self.factor()
        if kind == "num":
            return _pconst_poly(Fraction(int(text)))
        if kind == "name":
            if self.peek() == "(":  # a call: opaque, its own text
                depth = 0
                while self.i < len(self.toks):
                    t = self.take()[1]
                    depth += t == "("
                    depth -= t == ")"
                    if depth == 0:
                        break
                return _patom(self.s[start:self.toks[self.i - 1][3]])
            return _patom(text)
        if text == "(":
            p = self.expr()
            if self.peek() != ")":
                raise _Opaque(self.s)
            self.take()
            return p
        raise _Opaque(self.s)


def _wrap(d) -> str:
    """d as one factor: as it is when it is a number or already one parenthesised group."""
    d = str(d)
    if d.lstrip("-").isdigit():
        return d
    if d.startswith("("):
        depth = 0
        for i, ch in enumerate(d):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                if i == len(d) - 1:
                    return d
                break
    return f"({d})"


def _pconst_poly(c):
    return ((_ONE, c),) if c else ()


def _patom(name):
    return (((name,), Fraction(1)),)


def _pconst(p):
    if not p:
        return Fraction(0)
    if len(p) == 1 and p[0][0] == _ONE:
        return p[0][1]
    return None


def _norm(terms: dict):
    return tuple(sorted((m, c) for m, c in terms.items() if c))


def _padd(p, q):
    t = dict(p)
    for m, c in q:
        t[m] = t.get(m, 0) + c
    return _norm(t)


def _pscale(p, k):
    return _norm({m: c * k for m, c in p})


def _pmul(p, q):
    t = {}
    for ma, ca in p:
        for mb, cb in q:
            m = tuple(sorted(ma + mb))
            t[m] = t.get(m, 0) + ca * cb
    return _norm(t)


@lru_cache(maxsize=16384)
def _poly(d: Dim):
    """The polynomial of a Dim (None for unknown)."""
    if d is None:
        return None
    if is_const(d):
        return _pconst_poly(Fraction(d))
    try:
        return _Parser(d).parse()
    except (_Opaque, RecursionError):
        return _patom(d if d.startswith("(") and d.endswith(")") else f"({d})")


def _fmt_coef_term(mono, c):
    body = "*".join(mono)
    num, den = c.numerator, c.denominator
    if not mono:
        return str(num) if den == 1 else f"{num}/{den}"
    s = body if num == 1 else f"{num}*{body}"
    return s if den == 1 else f"{s}/{den}"


def _order(term):
    mono, _ = term
    return (mono == _ONE, -len(mono), mono)


@lru_cache(maxsize=16384)
def _dim(p) -> Dim:
    """The canonical Dim of a polynomial: an int when it is an integer constant."""
    if not p:
        return 0
    c = _pconst(p)
    if c is not None:
        return int(c) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"
    terms = sorted(p, key=_order)
    parts = [_fmt_coef_term(m, c) for m, c in terms]
    if len(parts) == 1:
        return parts[0]
    out = parts[0]
    for s in parts[1:]:
        out += s if s.startswith("-") else "+" + s
    return f"({out})"


def _size(p) -> Dim:
    """A polynomial as a size: a non-integer constant is no size (unknown)."""
    d = _dim(p)
    if isinstance(d, str) and _pconst(p) is not None:
        return None
    return d


# ---------------------------------------------------------------- arithmetic
def same(a: Dim, b: Dim) -> bool | None:
    """True/False when decidable, None when an unknown is involved."""
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a == b
    if a == b:
        return True
    if is_sym(a) and is_sym(b):
        diff = _pconst(_padd(_poly(a), _pscale(_poly(b), Fraction(-1))))
        if diff is None:
            return None
        return diff == 0
    # a constant against a symbol: the symbol may take that value
    return None


def differ(a: Dim, b: Dim) -> bool:
    """Known to be different (safe to block on)."""
    return is_const(a) and is_const(b) and a != b


def mul(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:  # two numbers (most sizes): no call to is_const
        return a * b
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a * b
    if type(b) is int and type(a) is str:
        return _scaled(a, b)
    if type(a) is int and type(b) is str:
        return _scaled(b, a)
    return _mul_sym(a, b)


_SCALED: dict = {}  # (size, int) -> their product: a repeated layer's product is looked up, not formatted again


def _scaled(s: str, k: int) -> Dim:
    out = _SCALED.get((s, k), _SLOW)
    if out is _SLOW:
        if len(_SCALED) >= 8192:  # bounded as the lru caches are
            _SCALED.clear()
        out = _SCALED[s, k] = _scale_term(s, k)
    return out


def _one_term(s: str):
    """(coefficient, names) of a size written as one term in its canonical form or close to it (`B`, `56*B`,
    `B*T`, `8320*B*T`: an optional positive integer, then plain names), read without the parser, whose
    Fraction arithmetic was most of the cost of a product on layers of distinct sizes (a BatchNorm's batch x
    spatial count, a convolution's FLOPs); None for any other text (the parser reads it). The names come back
    as written, unsorted: a product sorts them, as the polynomial's monomial sorts its atoms."""
    names = s.split("*")
    head = names[0]
    if head.isdigit() and head.isascii():
        c = int(head)
        if not c or len(names) == 1:
            return None
        del names[0]
    else:
        c = 1
    for name in names:
        if not (name.isidentifier() and name.isascii()):
            return None
    return c, names


def _scale_term(s: str, k: int) -> Dim:
    """s * k for a size of one term with an integer coefficient (`B*T` times 8320, a layer's FLOPs), written as
    _mul_sym writes it but without its cache, whose keys never repeat on layers of distinct widths (each
    product went through the polynomial product and the formatter); _mul_sym for anything else."""
    term = _one_term(s) if k else None
    if term is not None:
        num = term[0] * k
        body = "*".join(sorted(term[1]))
        return body if num == 1 else f"{num}*{body}"
    p = _poly(s)
    if len(p) != 1 or k == 0:
        return _mul_sym(s, k)
    mono, c = p[0]
    if not mono or c.denominator != 1:
        return _mul_sym(s, k)
    num = c.numerator * k
    body = "*".join(sorted(mono))
    return body if num == 1 else f"{num}*{body}"


@lru_cache(maxsize=8192, typed=True)
def _mul_sym(a: Dim, b: Dim) -> Dim:
    if a == 0 or b == 0:
        return 0
    if type(a) is str and type(b) is str:  # two terms of names (`B` times `T`): their product without the parser
        ta, tb = _one_term(a), _one_term(b)
        if ta is not None and tb is not None:
            num = ta[0] * tb[0]
            body = "*".join(sorted(ta[1] + tb[1]))
            return body if num == 1 else f"{num}*{body}"
    return _size(_pmul(_poly(a), _poly(b)))


def prod(dims) -> Dim:
    if len(dims) > _LONG:
        out = _prod_long(dims)
        if out is not _SLOW:
            return out
    out: Dim = 1
    for d in dims:
        if type(d) is int and type(out) is int:  # = mul(out, d), without the call
            out *= d
            continue
        out = mul(out, d)
        if out is None:
            return None
    return out


_LONG = 16
_SLOW = object()


def _prod_long(dims):
    """The product of a long shape in one pass, equal to multiplying one dim at a time (which
    re-sorts the growing product at each step: quadratic in the rank, hours for 100,000 dims).
    _SLOW when a dim is a sum, whose product is left to the step-by-step walk."""
    coef = Fraction(1)
    names: list[str] = []
    for d in dims:
        if d is None:
            return None
        if type(d) is int:
            if d == 0:
                return 0
            coef *= d
            continue
        p = _poly(d) if len(d) < 64 else _poly.__wrapped__(d)  # long strings stay out of the cache
        if len(p) != 1:
            return _SLOW
        mono, c = p[0]
        coef *= c
        names.extend(mono)
    return _size(((tuple(sorted(names)), coef),))


def add(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:  # two numbers (most sizes): no call to is_const
        return a + b
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a + b
    if b == 0:
        return a
    if a == 0:
        return b
    return _add_sym(a, b)


@lru_cache(maxsize=8192, typed=True)
def _add_sym(a: Dim, b: Dim) -> Dim:
    return _size(_padd(_poly(a), _poly(b)))


def total(dims) -> Dim:
    """The sum of many sizes in one pass (a Concat of thousands of symbolic operands): adding one at a
    time re-reads the growing sum at each step, quadratic in the count or worse."""
    if any(d is None for d in dims):
        return None
    if all(is_const(d) for d in dims):
        return sum(dims)
    terms: dict = {}
    for d in dims:
        for m, c in (_poly(d) if is_const(d) or len(d) < 64 else _poly.__wrapped__(d)):
            terms[m] = terms.get(m, 0) + c
    return _size(_norm(terms))


def sub(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:  # two numbers (most sizes): no call to is_const
        return a - b
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a - b
    if a == b:
        return 0
    return _size(_padd(_poly(a), _pscale(_poly(b), Fraction(-1))))


def floordiv(a: Dim, b: int) -> Dim:
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a // b if b else None
    if b == 1:
        return a
    q = exact_div(a, b)
    if q is not None and all(c.denominator == 1 for _, c in _poly(q)):
        return q
    if not is_const(b):
        return None
    # fully parenthesised, so that a later product cannot change its meaning
    return f"({_wrap(a)}//{b})"


def truediv(a: Dim, b: Dim) -> Dim:
    """a / b as an exact polynomial (`T/2`), when b is one term that divides every term of a;
    None otherwise (and for a constant that is not an integer)."""
    return exact_div(a, b)


def exact_div(a: Dim, b: Dim) -> Dim:
    """a / b where the caller knows it divides (a reshape's -1)."""
    if a is None or b is None:
        return None
    if is_const(a) and is_const(b):
        return a // b if b and a % b == 0 else None
    pb = _poly(b)
    if len(pb) != 1 or not pb[0][1]:
        return None
    mb, cb = pb[0]
    out = {}
    for m, c in _poly(a):
        rest = list(m)
        for s in mb:
            if s in rest:
                rest.remove(s)
            else:
                return None
        key = tuple(rest)
        out[key] = out.get(key, 0) + c / cb
    return _size(_norm(out))


def divides(a: Dim, b: Dim) -> bool:
    """Whether b divides a for every size of their symbols (a / b is a polynomial with integer
    coefficients: `B*T*64` by `B*T*8`); False when it may not (`B*T*64` by 5 needs B*T a multiple of 5)."""
    q = exact_div(a, b)
    return q is not None and all(c.denominator == 1 for _, c in _poly(q))


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


def single_symbol(d: Dim) -> str | None:
    """The name when d is exactly one named symbol (`B`), else None."""
    if isinstance(d, str) and d.isidentifier():
        return d
    return None


_SUBSTITUTE_LIMIT = 2 ** 63


def substitute(d: Dim, env: dict[str, int]) -> Dim:
    """Replace symbols by sizes (for cost quotes); opaque parts are evaluated safely."""
    if not is_sym(d):
        return d
    if d in env:
        return env[d]
    fast = _substitute_term(d, env)
    if fast is not _SLOW:
        return fast
    total = 0
    for mono, c in _poly(d):
        # an integer coefficient (nearly all of them) is multiplied as an int: Fraction arithmetic was most
        # of the cost quote's time on designs whose layers do not repeat
        v = c.numerator if c.denominator == 1 else c
        for atom in mono:
            x = env.get(atom) if atom in env else (_eval_expr(atom, env) if not atom.isidentifier() else None)
            if not is_const(x):
                return None
            v *= x
            if abs(v) > _SUBSTITUTE_LIMIT:  # past torch's int64: unknown, before the numbers grow to
                return None                 # thousands of digits (T^2000 took 20 s per verify)
        total += v
    return int(total) if total.denominator == 1 else None


def _substitute_term(d: str, env: dict) -> Dim:
    """substitute() of a size written as one term of names the env sets as ints (`8320*B*T`, a layer's FLOPs;
    the canonical form writes the names sorted), multiplied in the polynomial's order without parsing the
    text (each layer of distinct widths has a text of its own, so the parser's cache missed on every one);
    _SLOW for any other text."""
    names = d.split("*")
    head = names[0]
    if head.isdigit() and head.isascii():
        v = int(head)
        del names[0]
        if not names:
            return _SLOW
    else:
        v = 1
    prev = ""
    for name in names:
        if name < prev or type(env.get(name)) is not int or not (name.isidentifier() and name.isascii()):
            return _SLOW
        prev = name
    for name in names:
        v *= env[name]
        if abs(v) > _SUBSTITUTE_LIMIT:
            return None
    return v


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
            if isinstance(n.op, ast.Div) and b and a % b == 0:
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

from .valueclass import value_class as _value_class  # noqa: E402

_OPERATORS = _re.compile(r"[()+*/\s]+|(?<=[\w)])-")


@_value_class(frozen=True)
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
    if type(a) is int and type(b) is int and kind == "eq":  # the common case: two known sizes
        return a == b
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
    return list(_symbols_in(d) if len(d) < 64 else _symbols_in.__wrapped__(d))  # long ones stay out of the cache


@lru_cache(maxsize=8192)
def _symbols_in(d: str) -> tuple:
    out = []
    for part in _OPERATORS.split(d):
        part = part.strip()
        if part and not part.lstrip("-").isdigit() and part not in out:
            out.append(part)
    return tuple(out)


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


def always(cond: Condition) -> bool:
    """Whether every size (>= 1) of its symbols satisfies the condition, proved with the polynomial
    arithmetic: `1 <= T`, `T <= (T+2)`, `T <= T*T`, `2 <= 2*T`, a multiple by construction (`B*T*64` of
    `B*T*8`), sides equal as polynomials, a broadcast against 1. Such a condition says nothing about the
    design. False when it cannot tell."""
    if cond.kind == "multiple":
        return divides(cond.lhs, cond.rhs)
    if cond.kind in ("eq", "broadcast", "expand"):
        if same(cond.lhs, cond.rhs) is True:
            return True
        ones = (cond.lhs,) if cond.kind == "expand" else (cond.lhs, cond.rhs) if cond.kind == "broadcast" else ()
        return any(d == 1 for d in ones)
    if cond.kind != "le":
        return False
    rest = _poly(sub(cond.rhs, cond.lhs)) if is_sym(cond.rhs) or is_sym(cond.lhs) else None
    return rest is not None and nonnegative(rest)


_SHIFT_MOST = 32  # the degree past which `nonnegative` does not expand (T**2000 would be thousands of terms)


def nonnegative(p) -> bool:
    """Whether the polynomial `p` is >= 0 at every size >= 1 of its symbols: written in s = T - 1 >= 0 for
    each symbol T, a polynomial whose coefficients are all >= 0 is (T*T - T is s*s + s). A sufficient
    test, not a decision: False when it cannot prove it (opaque atoms such as a floor division)."""
    if any(not atom.isidentifier() for mono, _ in p for atom in mono):
        return False
    if any(len(mono) > _SHIFT_MOST for mono, _ in p):
        return False
    shifted: tuple = ()
    for mono, c in p:
        term = _pconst_poly(c)
        for atom in mono:  # T -> (T + 1), T now standing for the size less one
            term = _pmul(term, ((_ONE, Fraction(1)), ((atom,), Fraction(1))))
            if len(term) > 4096:
                return False
        shifted = _padd(shifted, term)
    return all(c >= 0 for _, c in shifted)


def satisfiable(cond: Condition, fixed: dict | None = None, bounds: dict | None = None) -> bool:
    """Whether some positive sizes of its free symbols satisfy the condition (searched over the sizes
    that could: 1..64 and the constants it names, their multiples and fractions). `bounds`: symbol ->
    (least, most) for a symbol whose sizes are known to lie in a range (a constant slice of a symbolic
    size); only those sizes are tried for it."""
    fixed = fixed or {}
    bounds = bounds or {}
    syms = [s for s in dict.fromkeys(symbols_of(cond.lhs) + symbols_of(cond.rhs)) if s not in fixed]
    if not syms:
        return holds(cond, fixed) is not False
    values = sorted(set(range(1, 65)) | set(_candidates(cond)))

    def within(sym, tried):
        """The sizes to try for a symbol: all of its range when short, else the sizes worth trying inside
        it and its ends (a slice of 2**63-1 of T is up to that long: listing its range never ends)."""
        if sym not in bounds:
            return tried
        lo, hi = bounds[sym][0], bounds[sym][1]
        if hi - lo <= 4096:
            return range(lo, hi + 1)
        return sorted({lo, hi, *(v for v in values if lo <= v <= hi)})

    if len(syms) == 1:
        env = dict(fixed)
        for v in within(syms[0], values):
            env[syms[0]] = v
            if holds(cond, env) is not False:
                return True
        return False
    small = [v for v in values if v <= 16] + [v for v in values if v > 16][:24]
    import itertools

    domains = [within(s, small) for s in syms]
    for combo in itertools.islice(itertools.product(*domains), 20000):
        env = dict(fixed)
        env.update(zip(syms, combo))
        if holds(cond, env) is not False:
            return True
    return False


def clear_caches() -> None:
    """Forget every size computed so far. The caches are per process and shared by every design it
    verifies; a benchmark that verifies one design again and again clears them before each run, so that it
    times a design the process has not seen (they save 7-12% on a design seen before)."""
    for cached in (_poly, _dim, _mul_sym, _add_sym, _symbols_in):
        cached.cache_clear()
    _SCALED.clear()
