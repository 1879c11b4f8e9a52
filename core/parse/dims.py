"""Symbolic sizes for the static parser.

A size is an ``int``, a :class:`Sym` (a polynomial over named symbols with
rational coefficients, e.g. ``B``, ``B*64``, ``T/2``) or ``None`` (nobody can
know it).  Polynomials keep exact arithmetic for the common cases
(``B * T``, ``x.size(0) // heads`` …); anything else becomes ``None``.
"""

from __future__ import annotations

from fractions import Fraction


class Sym:
    __slots__ = ("terms",)

    def __init__(self, terms):
        # terms: dict[tuple[str, ...] (sorted symbol names, with repeats), Fraction]
        self.terms = {k: v for k, v in terms.items() if v != 0}

    @staticmethod
    def named(name: str) -> Sym:
        return Sym({(name,): Fraction(1)})

    # -- helpers -------------------------------------------------------
    def simplify(self):
        """An int when the polynomial is a constant integer."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and () in self.terms:
            c = self.terms[()]
            if c.denominator == 1:
                return int(c)
        return self

    def single_symbol(self):
        """The symbol name when this is exactly one symbol with coefficient 1."""
        if len(self.terms) == 1:
            (k, v), = self.terms.items()
            if len(k) == 1 and v == 1:
                return k[0]
        return None


    def substitute(self, env: dict):
        """Evaluate with symbol values from env; None when a symbol is missing."""
        total = Fraction(0)
        for k, c in self.terms.items():
            v = Fraction(c)
            for s in k:
                if s not in env:
                    return None
                v *= env[s]
            total += v
        if total.denominator != 1:
            return None
        return int(total)

    def __repr__(self):
        parts = []
        for k, c in sorted(self.terms.items()):
            mono = "*".join(k)
            if not k:
                parts.append(str(c))
            elif c == 1:
                parts.append(mono)
            else:
                parts.append(f"{c}*{mono}")
        return "+".join(parts) or "0"

    # structural equality (used by Python containers); the interpreter uses dim_eq
    def __eq__(self, other):
        return isinstance(other, Sym) and other.terms == self.terms

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))


def as_sym(v):
    if isinstance(v, Sym):
        return v
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, (int, Fraction)):
        return Sym({(): Fraction(v)})
    return None


def _norm(s: Sym):
    return s.simplify()


def dim_add(a, b, sign=1):
    if type(a) is int and type(b) is int:
        return a + sign * b
    sa, sb = as_sym(a), as_sym(b)
    if sa is None or sb is None:
        return None
    t = dict(sa.terms)
    for k, v in sb.terms.items():
        t[k] = t.get(k, 0) + sign * v
    return _norm(Sym(t))


def dim_mul(a, b):
    if type(a) is int and type(b) is int:
        return a * b
    sa, sb = as_sym(a), as_sym(b)
    if sa is None or sb is None:
        return None
    t = {}
    for ka, va in sa.terms.items():
        for kb, vb in sb.terms.items():
            k = tuple(sorted(ka + kb))
            t[k] = t.get(k, 0) + va * vb
    return _norm(Sym(t))


def _div_exact(sa: Sym, sb: Sym):
    """sa / sb when sb is a single monomial; None otherwise."""
    if len(sb.terms) != 1:
        return None
    (kb, vb), = sb.terms.items()
    t = {}
    for ka, va in sa.terms.items():
        rest = list(ka)
        for s in kb:
            if s in rest:
                rest.remove(s)
            else:
                return None
        t[tuple(rest)] = t.get(tuple(rest), 0) + va / vb
    return Sym(t)


def dim_truediv(a, b):
    if type(a) is int and type(b) is int:
        if b == 0:
            return None
        return a // b if a % b == 0 else None
    sa, sb = as_sym(a), as_sym(b)
    if sa is None or sb is None:
        return None
    r = _div_exact(sa, sb)
    return None if r is None else _norm(r)


def dim_floordiv(a, b):
    if type(a) is int and type(b) is int:
        if b == 0:
            return None
        return a // b
    sa, sb = as_sym(a), as_sym(b)
    if sa is None or sb is None:
        return None
    r = _div_exact(sa, sb)
    if r is None:
        return None
    if all(v.denominator == 1 for v in r.terms.values()):
        return _norm(r)
    return None


def dim_eq(a, b):
    """True / False / None (undecidable)."""
    if type(a) is int and type(b) is int:
        return a == b
    if a is None or b is None:
        return None
    sa, sb = as_sym(a), as_sym(b)
    if sa is None or sb is None:
        return None
    if sa.terms == sb.terms:
        return True
    d = dim_add(a, b, -1)
    if isinstance(d, int):
        return d == 0
    return None


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def prod(dims):
    out = 1
    for d in dims:
        out = dim_mul(out, d)
        if out is None:
            return None
    return out
