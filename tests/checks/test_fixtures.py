"""Every rule fires on its folder's fire.json and stays silent on clean.json (rules/<rule id>/); the
verifier's exact words on both are the folder's reviewed messages.txt; and block pairs hold in torch: the
firing design fails, the clean one runs.

A changed message fails here until its snapshot is reviewed: `ARCHCURATOR_UPDATE_SNAPSHOTS=1 pytest
tests/checks/test_fixtures.py` rewrites the messages.txt files, and `git diff tests/checks/rules` shows
what changed.
"""

from __future__ import annotations

import os

import pytest
from rule_fixtures import FIXTURES, RULES_DIR

from archcurator.core.checks import CATALOGUE
from archcurator.core.graph import Design
from archcurator.core.verify import verify_graph

# a warn rule whose firing fixture may fail when run, by definition: the size it could not follow
# is made up (8) by the runner, and the layer's requirement was never checked
MAY_FAIL_WHEN_RUN = {"shape.unknown-dim"}


def _findings(d: dict):
    return verify_graph(Design.from_dict(d)).findings


def messages(rule: str) -> str:
    """What the verifier says on the rule's two designs, one finding a line."""
    out = [f"# {rule}: the verifier's findings on fire.json and clean.json"]
    for name, design in zip(("fire", "clean"), FIXTURES[rule]):
        report = verify_graph(Design.from_dict(design))
        out.append(f"{name}.json: {report.verdict}")
        out += [f"  {f.severity} {f.rule} [{', '.join(f.nodes)}]: {f.message}" for f in report.findings]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("rule", sorted(FIXTURES))
def test_messages_are_the_reviewed_snapshot(rule):
    path = RULES_DIR / rule / "messages.txt"
    said = messages(rule)
    if os.environ.get("ARCHCURATOR_UPDATE_SNAPSHOTS") == "1":
        path.write_text(said, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with ARCHCURATOR_UPDATE_SNAPSHOTS=1 and review it"
    assert said == path.read_text(encoding="utf-8"), f"the words of {rule} changed: review, then update {path}"


def test_every_check_has_a_fixture_pair():
    missing = sorted(set(CATALOGUE) - set(FIXTURES))
    unknown = sorted(set(FIXTURES) - set(CATALOGUE))
    assert not missing, f"checks without a fire/clean fixture: {missing}"
    assert not unknown, f"fixtures for checks the catalogue does not have: {unknown}"


@pytest.mark.parametrize("rule", sorted(FIXTURES))
def test_fires_on_fixture_and_not_on_clean_twin(rule):
    fire, clean = FIXTURES[rule]
    fired = [f for f in _findings(fire) if f.rule == rule]
    assert fired, f"{rule} does not fire on its fixture: {[f.rule for f in _findings(fire)]}"
    assert all(f.severity == CATALOGUE[rule].severity for f in fired)
    assert not [f for f in _findings(clean) if f.rule == rule], f"{rule} fires on its clean twin"


def test_clean_twins_of_block_rules_do_not_block():
    for rule, (_, clean) in FIXTURES.items():
        blocks = [f.rule for f in _findings(clean) if f.severity == "block"]
        assert not blocks, f"clean twin of {rule} blocks: {blocks}"


@pytest.mark.slow
def test_fixtures_hold_in_torch():
    """Block fixtures fail in torch, their clean twins and every warn fixture run (one child process)."""
    from archcurator.core.ground import observe_all

    cases = []
    for rule, (fire, clean) in sorted(FIXTURES.items()):
        cases.append({"case": f"{rule}/fire", "graph": fire})
        cases.append({"case": f"{rule}/clean", "graph": clean})
    obs = observe_all(cases, timeout=30)
    wrong = []
    for rule in sorted(FIXTURES):
        f, c = obs[f"{rule}/fire"], obs[f"{rule}/clean"]
        if c["status"] != "ok":
            wrong.append(f"{rule}/clean {c['status']} {c['exception']}: {c['message'][:100]}")
        want_fail = CATALOGUE[rule].severity == "block"
        if want_fail and f["status"] == "ok":
            wrong.append(f"{rule}/fire blocks but ran")
        if not want_fail and f["status"] != "ok" and rule not in MAY_FAIL_WHEN_RUN:
            wrong.append(f"{rule}/fire only warns but {f['status']} {f['exception']}: {f['message'][:100]}")
    assert not wrong, "\n".join(wrong)
