"""Reports over the store: refusals (SPEC §4), rules (precision / recall), curator agreement."""

from __future__ import annotations

import math

from archcurator.core.imports.verified import default_gpu

from .connection import DB, reading

Z95 = 1.959963984540054


def _key(author, model, task_set):
    return (author, model, task_set)


def refusal_report(db: DB) -> dict:
    """`{"rows": [...]}`, one row per author, model and task set (SPEC §4).

    Each row: author, model, taskSet {label}, returned (designs with a graph),
    blocked (returned with verdict block), blockedShare (blocked / returned,
    null when nothing returned), blockedShareRange [lo, hi] (min and max of the
    share over the recorded runs that returned something), ungenerated,
    ruleIds {rule: refused designs it fired on} (live findings of any severity
    on blocked designs; most frequent first), medianQuotedCost (median USD of
    one training run of each refused design on the default GPU, A10G; null
    when none is priced). Also (additions): runs (recorded runs counted),
    costDevice ("A10G").
    """
    with reading(db) as con:
        groups = con.execute("""
            SELECT author, model, task_set,
                   count(*) FILTER (WHERE error IS NULL) AS returned,
                   count(*) FILTER (WHERE verdict = 'block') AS blocked,
                   count(*) FILTER (WHERE error IS NOT NULL) AS ungenerated,
                   median(cost_a10g_usd) FILTER (WHERE verdict = 'block') AS med
            FROM designs GROUP BY author, model, task_set""").fetchall()
        ranges = con.execute("""
            SELECT author, model, task_set, min(share), max(share), count(*)
            FROM (SELECT author, model, task_set, run,
                         count(*) FILTER (WHERE verdict = 'block') / count(*) FILTER (WHERE error IS NULL) AS share
                  FROM designs GROUP BY author, model, task_set, run
                  HAVING count(*) FILTER (WHERE error IS NULL) > 0)
            GROUP BY author, model, task_set""").fetchall()
        rules = con.execute("""
            SELECT d.author, d.model, d.task_set, f.rule, count(DISTINCT f.design_id) AS n,
                   count(DISTINCT f.design_id) FILTER (WHERE f.severity = 'block') AS nb
            FROM findings f JOIN designs d ON d.id = f.design_id
            WHERE d.verdict = 'block' AND NOT f.stale
            GROUP BY d.author, d.model, d.task_set, f.rule""").fetchall()
    by_range = {_key(*r[:3]): (r[3], r[4], r[5]) for r in ranges}
    by_rules: dict = {}
    by_blocking: dict = {}
    for a, m, t, rule, n, nb in rules:
        by_rules.setdefault(_key(a, m, t), []).append((rule, n))
        if nb:
            by_blocking.setdefault(_key(a, m, t), []).append((rule, nb))
    out = []
    gpu = default_gpu()
    order = {"reference": 0, "human": 1, "agent": 2}
    for a, m, t, returned, blocked, ungenerated, med in sorted(
            groups, key=lambda g: (order.get(g[0], 9), g[0], g[1] or "", g[1] is not None, g[2] or "")):
        lo, hi, nruns = by_range.get(_key(a, m, t), (None, None, 0))
        rule_counts = sorted(by_rules.get(_key(a, m, t), []), key=lambda x: (-x[1], x[0]))
        out.append({
            "author": a,
            "model": m,
            "taskSet": {"label": t},
            "returned": returned,
            "blocked": blocked,
            "blockedShare": (blocked / returned) if returned else None,
            "blockedShareRange": [lo, hi] if lo is not None else [None, None],
            "ungenerated": ungenerated,
            "ruleIds": {rule: n for rule, n in rule_counts},
            "blockingRuleIds": {rule: n for rule, n in sorted(by_blocking.get(_key(a, m, t), []),
                                                             key=lambda x: (-x[1], x[0]))},
            "medianQuotedCost": None if med is None else float(med),
            "runs": nruns,
            "costDevice": gpu,
        })
    return {"rows": out}


def wilson_lower(successes: int, n: int, z: float = Z95) -> float | None:
    """Lower bound of the Wilson score interval (95% by default); None when n = 0."""
    ci = wilson_interval(successes, n, z)
    return None if ci is None else ci[0]


def wilson_interval(successes: int, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval [lo, hi] (95% by default); None when n = 0."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [max(0.0, (centre - margin) / denom), min(1.0, (centre + margin) / denom)]


def rules_report(db: DB, curator: str | None = None) -> dict:
    """`{"rows": [...]}`, one row per rule that fired, was judged or was marked missed.

    Each row: rule, firings (live findings), designs (designs it fires on),
    block / warn (live findings by severity), stale (judged findings that no
    longer fire), real / false_alarm / unsure / unjudged (live findings by
    verdict), precision (real / (real + false_alarm), null when neither),
    precisionLower (Wilson 95% lower bound), missed (curators' missed defects
    naming the rule), recall (real / (real + missed), only where a missed
    defect names the rule; else null), falseAlarmRate (false_alarm / (real +
    false_alarm), null when neither) with falseAlarmInterval ([lo, hi], the
    Wilson 95% interval), demoted ({"reason", "by", "at"} when the project
    demoted the rule, store.demotions; else null).

    A finding's verdict: `curator`'s current one when given; otherwise its
    adjudicated final verdict where curators disagreed and an adjudicator
    decided, else the verdict most curators currently give it (a tie is
    `unsure`).

    Missed defects count for a rule only when it is a known rule (the check
    catalogue's, or one that fired in this store); the others (recorded as
    `other: TEXT`, or names no rule has) are listed apart under `other`:
    [{"rule", "missed"}], never as rows of phantom rules.
    """
    from .missed import catalogue_rules

    where = " AND curator = ?" if curator else ""
    params = [curator] if curator else []
    adjudicated = "" if curator else """
            UNION ALL
            SELECT design_id, finding_key, verdict FROM current_adjudications"""
    skip_adjudicated = "" if curator else """
                WHERE NOT EXISTS (SELECT 1 FROM current_adjudications a
                                  WHERE a.design_id = votes.design_id AND a.finding_key = votes.finding_key)"""
    known = sorted(catalogue_rules())
    with reading(db) as con:
        rows = con.execute(f"""
            WITH votes AS (
                SELECT design_id, finding_key,
                       count(*) FILTER (WHERE verdict = 'real') AS r,
                       count(*) FILTER (WHERE verdict = 'false_alarm') AS fa,
                       count(*) FILTER (WHERE verdict = 'unsure') AS u
                FROM current_judgments WHERE finding_key IS NOT NULL{where}
                GROUP BY design_id, finding_key),
            fv AS (
                SELECT design_id, finding_key,
                       CASE WHEN r > fa AND r > u THEN 'real'
                            WHEN fa > r AND fa > u THEN 'false_alarm'
                            ELSE 'unsure' END AS v
                FROM votes{skip_adjudicated}{adjudicated}),
            per AS (
                SELECT f.rule,
                       count(*) FILTER (WHERE NOT f.stale) AS firings,
                       count(DISTINCT f.design_id) FILTER (WHERE NOT f.stale) AS designs,
                       count(*) FILTER (WHERE NOT f.stale AND f.severity = 'block') AS block,
                       count(*) FILTER (WHERE NOT f.stale AND f.severity = 'warn') AS warn,
                       count(*) FILTER (WHERE f.stale) AS stale,
                       count(*) FILTER (WHERE NOT f.stale AND fv.v = 'real') AS real,
                       count(*) FILTER (WHERE NOT f.stale AND fv.v = 'false_alarm') AS false_alarm,
                       count(*) FILTER (WHERE NOT f.stale AND fv.v = 'unsure') AS unsure,
                       count(*) FILTER (WHERE NOT f.stale AND fv.v IS NULL) AS unjudged
                FROM findings f
                LEFT JOIN fv ON fv.design_id = f.design_id AND fv.finding_key = f.key
                GROUP BY f.rule),
            known AS (SELECT unnest(?::VARCHAR[]) AS rule UNION SELECT DISTINCT rule FROM findings),
            miss AS (
                SELECT rule, count(*) AS missed FROM missed_defects
                WHERE retracted_at IS NULL AND rule IN (SELECT rule FROM known) GROUP BY rule)
            SELECT coalesce(per.rule, miss.rule) AS rule,
                   coalesce(firings, 0), coalesce(designs, 0), coalesce(block, 0), coalesce(warn, 0),
                   coalesce(stale, 0), coalesce(real, 0), coalesce(false_alarm, 0), coalesce(unsure, 0),
                   coalesce(unjudged, 0), coalesce(missed, 0)
            FROM per FULL OUTER JOIN miss ON miss.rule = per.rule
            ORDER BY 2 DESC, 1""", params + [known]).fetchall()
        other = con.execute("""
            SELECT rule, count(*) FROM missed_defects
            WHERE retracted_at IS NULL AND rule IS NOT NULL
              AND rule NOT IN (SELECT unnest(?::VARCHAR[])) AND rule NOT IN (SELECT DISTINCT rule FROM findings)
            GROUP BY rule ORDER BY 2 DESC, 1""", [known]).fetchall()
    from .demotions import demotions

    demoted = demotions(db)
    out = []
    for (rule, firings, designs, block, warn, stale, real, fa, unsure, unjudged, missed) in rows:
        n = real + fa
        out.append({
            "rule": rule, "firings": firings, "designs": designs, "block": block, "warn": warn,
            "stale": stale, "real": real, "false_alarm": fa, "unsure": unsure, "unjudged": unjudged,
            "precision": (real / n) if n else None,
            "precisionLower": wilson_lower(real, n),
            "missed": missed,
            "recall": (real / (real + missed)) if missed else None,
            "falseAlarmRate": (fa / n) if n else None,
            "falseAlarmInterval": wilson_interval(fa, n),
            "demoted": demoted.get(rule),
        })
    return {"rows": out, "curator": curator, "other": [{"rule": r, "missed": n} for r, n in other]}


AGREEMENT_CATEGORIES = ("real", "false_alarm", "unsure")


def cohen_kappa(pairs: list[tuple[str, str]], categories=AGREEMENT_CATEGORIES) -> dict:
    """Cohen's kappa of paired labels: n, observed / expected agreement, kappa, matrix."""
    n = len(pairs)
    matrix = {a: {b: 0 for b in categories} for a in categories}
    for x, y in pairs:
        matrix[x][y] += 1
    if n == 0:
        return {"n": 0, "observed": None, "expected": None, "kappa": None, "matrix": matrix}
    po = sum(matrix[c][c] for c in categories) / n
    pe = sum((sum(matrix[c].values()) / n) * (sum(matrix[r][c] for r in categories) / n) for c in categories)
    kappa = None if pe >= 1.0 else (po - pe) / (1 - pe)
    return {"n": n, "observed": po, "expected": pe, "kappa": kappa, "matrix": matrix}


def agreement_report(db: DB, a: str, b: str) -> dict:
    """Cohen's kappa between curators `a` and `b` over the findings both have judged
    (their current verdicts; stale findings included). kappa is null when no
    finding was judged by both, or when chance agreement is 1 (both gave one
    and the same verdict to everything)."""
    with reading(db) as con:
        pairs = con.execute("""
            SELECT x.verdict, y.verdict
            FROM current_judgments x JOIN current_judgments y
              ON x.design_id = y.design_id AND x.finding_key = y.finding_key
            WHERE x.curator = ? AND y.curator = ? AND x.finding_key IS NOT NULL
            ORDER BY x.design_id, x.finding_key""", [a, b]).fetchall()
    out = {"a": a, "b": b, "categories": list(AGREEMENT_CATEGORIES)}
    out.update(cohen_kappa([(x, y) for x, y in pairs]))
    return out
