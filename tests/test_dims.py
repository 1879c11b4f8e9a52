"""core.dims: sizes as exact polynomials behind canonical strings (one model of sizes for the
parser, the verifier and the cost)."""

from __future__ import annotations

from archcurator.core import dims as D


def test_canonical_forms_stay_as_they_were():
    assert D.mul("B", 3) == "3*B" and D.mul("3*B", "T") == "3*B*T"
    assert D.add("H", -1) == "(H-1)" and D.add("B", "T") == "(B+T)"
    assert D.exact_div("3*B*T", "T") == "3*B"
    assert D.conv_out("H", 3, 1, 1) == "H"


def test_exact_polynomials():
    assert D.mul("B", 64) == "64*B" and D.mul("B", "T") == "B*T"
    assert D.truediv("T", 2) == "T/2" and D.mul(D.truediv("T", 2), 2) == "T"
    assert D.add("64*B", "B") == "65*B"
    assert D.sub(D.add("H", 1), "H") == 1
    assert D.exact_div("B*T", "B") == "T" and D.exact_div("B", "T") is None
    assert D.mul(D.add("H", 1), D.add("H", -1)) == "(H*H-1)"
    assert D.substitute("(H*H-1)", {"H": 5}) == 24 and D.substitute("T/2", {"T": 9}) is None


def test_equality_is_decided_on_the_polynomial():
    assert D.same(D.mul(D.add("H", 1), 2), D.add(D.mul("H", 2), 2)) is True
    assert D.same("(H+1)", "H") is False
    assert D.same("B", "T") is None and D.same("B", 3) is None
    assert not D.differ("B", 3)


def test_floor_division_that_does_not_divide_stays_one_exact_factor():
    q = D.floordiv("B", 4)
    assert q == "((B)//4)" and D.mul(q, 4) == "4*((B)//4)"
    assert D.substitute(D.mul(q, 3), {"B": 10}) == 6
    assert D.floordiv("4*B", 4) == "B"
    h = D.conv_out("H", 3, 2, 1)
    assert D.substitute(h, {"H": 32}) == 16 and D.substitute(D.add(h, h), {"H": 31}) == 32


def test_unparsable_strings_are_opaque_atoms():
    d = D.add("ceil((H+2-3)/2)+1", 1)
    assert isinstance(d, str) and D.same(d, D.add("ceil((H+2-3)/2)+1", 1)) is True
    assert D.mul("x y", 2) == "2*(x y)"
