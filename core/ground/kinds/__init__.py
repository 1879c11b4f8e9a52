"""Corrupted variants of the reference zoo, by kind: the grounding study's test set.

Each *kind* is one systematic fault a person or an agent makes when writing a
design (a Linear one width off, a residual whose shortcut lost its
projection, an Embedding too small for the vocabulary, ...). A kind knows
where in a graph it applies (its *sites*, in a fixed order) and how to apply
itself at one site. It also says what it claims:

- ``expect: "block"``: the corrupted graph cannot forward-pass (or cannot be
  built) — the verifier must block it and torch must fail;
- ``expect: "warn"``: the graph still runs, but wastes compute or trains
  badly — the verifier should warn (rule ``rules[0]``) and torch must not fail.

Sites are chosen from the clean graph's structure and its inferred types
(which sizes are constants); the corruption itself never asks the verifier
what it thinks of the result. `archcurator ground` then checks both the
verifier's verdicts and the kinds' claims against real torch runs.

Public API:

- ``KINDS``: name -> `Kind`, in a fixed order;
- ``corrupt(design_dict, kind, rng) -> dict | None``: one corrupted copy at
  a site drawn with ``rng`` (``None`` when the kind has no site there);
- ``corruption_set(zoo=None) -> list[case]`` and ``ground_set(zoo=None)`` (the
  clean zoo graphs first): the deterministic study set. A case is
  ``{"case": "resnet18/linear-width/fc", "kind", "base", "site", "expect",
  "rules", "graph"}``.
"""

from __future__ import annotations

import copy
import json

from ..edit import G
from . import connectivity, dtype, efficiency, numerics, shape  # noqa: F401  (registration)
from .base import KINDS, Kind


def corrupt(design_dict: dict, kind: str, rng) -> dict | None:
    """A corrupted copy of `design_dict` at a site drawn with `rng` (a random.Random), or None."""
    k = KINDS[kind]
    g = G(design_dict)
    sites = k.sites(g)
    if not sites:
        return None
    site = rng.choice(sites)
    return _apply(k, g, site, design_dict.get("name", ""))


def _apply(k: Kind, g: G, site: str, base: str) -> dict | None:
    try:
        out = k.apply(g, site)
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    if out is None:
        return None
    meta = dict(out.get("meta") or {})
    meta["corruption"] = {"kind": k.name, "site": site, "base": base, "expect": k.expect, "rules": list(k.rules)}
    out["meta"] = meta
    out["name"] = f"{base}/{k.name}/{site}"
    return out


def _spread(sites: list, n: int) -> list:
    """n sites spread over the list (first, last, then between), in a fixed order."""
    if n >= len(sites):
        return list(sites)
    if n == 1:
        return [sites[len(sites) // 2]]
    idx = sorted({round(i * (len(sites) - 1) / (n - 1)) for i in range(n)})
    return [sites[i] for i in idx]


def load_zoo() -> dict:
    """The shipped reference designs (assets/architectures), else the zoo built in memory."""
    from ...assets import asset_path

    folder = asset_path("architectures")
    files = sorted(folder.glob("*.json"))
    if files:
        out = {}
        for f in files:
            d = json.loads(f.read_text(encoding="utf-8"))
            out[d.get("name") or f.stem] = d
        return out
    from ...zoo import build_zoo

    return build_zoo()


def corruption_set(zoo: dict | None = None) -> list[dict]:
    """Every kind at its sites on its bases: the deterministic corrupted half of the study."""
    zoo = load_zoo() if zoo is None else zoo
    cases = []
    seen = set()
    for k in KINDS.values():
        for base in k.bases:
            if base not in zoo:
                continue
            sites = k.sites(G(zoo[base]))
            for site in _spread(sites, k.per_base):
                out = _apply(k, G(zoo[base]), site, base)
                cid = f"{base}/{k.name}/{site}"
                if out is None or cid in seen:
                    continue
                seen.add(cid)
                cases.append({"case": cid, "kind": k.name, "base": base, "site": site, "expect": k.expect,
                              "rules": list(k.rules), "graph": out})
    return cases


def clean_set(zoo: dict | None = None) -> list[dict]:
    zoo = load_zoo() if zoo is None else zoo
    return [{"case": f"{name}/clean", "kind": "clean", "base": name, "site": None, "expect": "pass", "rules": [],
             "graph": copy.deepcopy(d)} for name, d in zoo.items()]


def ground_set(zoo: dict | None = None) -> list[dict]:
    """The full grounding study: the clean zoo graphs, then every corrupted variant."""
    zoo = load_zoo() if zoo is None else zoo
    return clean_set(zoo) + corruption_set(zoo)


__all__ = ["KINDS", "Kind", "corrupt", "corruption_set", "clean_set", "ground_set", "load_zoo"]

