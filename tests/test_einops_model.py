"""One einops model (core/ops/einsum.py): the questions the verifier asks of a pattern (is its result a view,
which permutation does it apply, does a Reduce keep every axis) are answered from the table's one reading of
the pattern, and measured against torch running it (`einops_apply`, reshape / permute as einops does)."""

from __future__ import annotations

import itertools

import torch

from archcurator.core.ops.einsum import einops_apply, einops_is_view, einops_keeps_every_axis, einops_reorder


def _patterns():
    """Every reorder and grouping of 2 to 4 axes into the right side: 'a b c -> (b c) a' ..."""
    for k in (2, 3, 4):
        axes = "abcd"[:k]
        for perm in itertools.permutations(axes):
            for cuts in itertools.product((False, True), repeat=k - 1):
                groups, cur = [], [perm[0]]
                for ax, cut in zip(perm[1:], cuts):
                    if cut:
                        groups.append(cur)
                        cur = [ax]
                    else:
                        cur.append(ax)
                groups.append(cur)
                right = " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)
                yield " ".join(axes) + " -> " + right, k


def _is_view(y, x) -> bool:
    return y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_which_patterns_give_a_view_is_what_torch_does():
    """A merge of axes still next to each other after a reorder ('a b c -> c (a b)') is a view in torch; the
    verifier's own reading had called every merge after a reorder a copy."""
    wrong = []
    for pattern, k in _patterns():
        x = torch.zeros([2, 3, 4, 5][:k])
        if einops_is_view(pattern) != _is_view(einops_apply("rearrange", pattern, {}, x), x):
            wrong.append(pattern)
    x = torch.zeros(2, 1, 3)
    assert einops_is_view("b 1 c -> b c") == _is_view(einops_apply("rearrange", "b 1 c -> b c", {}, x), x)
    assert not wrong, wrong[:10]


def test_a_reorder_is_the_permutation_torch_applies():
    for pattern, k in _patterns():
        x = torch.randn([2, 3, 4, 5][:k])
        perm = einops_reorder(pattern, k)
        if "(" in pattern.split("->")[1]:
            assert perm is None, pattern
        else:
            assert torch.equal(x.permute(perm), einops_apply("rearrange", pattern, {}, x)), pattern
    assert einops_reorder("(b) c -> c b", 2) == [1, 0]  # a group of one axis is that axis, as in einops


def test_a_reduce_over_size_one_axes_only_keeps_every_value():
    x = torch.randint(0, 9, (2, 1, 3))
    assert einops_keeps_every_axis("b 1 c -> b c")
    assert torch.equal(einops_apply("reduce", "b 1 c -> b c", {}, x, "sum"), x.reshape(2, 3))
    assert not einops_keeps_every_axis("b h c -> b c")
