"""`archcurator report refusals|rules|agreement`: rich tables, or `--json`."""

from __future__ import annotations

import argparse
import json
import sys

from ..report_text import false_alarm_text
from .errors import fail, no_store


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("report", help="refusals by author, rule precision/recall, curator agreement",
                              description="Reports over the store. Rich tables by default; --json for scripts.")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    sub = p.add_subparsers(dest="report", metavar="REPORT", required=True)

    def common(sp):
        sp.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
        # also accepted after the report's name (cli.py adds --db to `report` itself)
        sp.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH", help="the store file")
        sp.set_defaults(func=run)

    common(sub.add_parser("refusals", help="per author, model and task set: returned, blocked, share, rules, cost",
                          description="SPEC §4: one row per author, model and task set."))
    rules = sub.add_parser("rules", help="per rule: firings, judgments, precision (Wilson 95%% lower), recall")
    rules.add_argument("--curator", help="use this curator's verdicts only (default: the majority verdict)")
    common(rules)
    agree = sub.add_parser("agreement", help="Cohen's kappa between two curators on findings both judged",
                           description="Cohen's kappa between two curators on the findings both judged. Without "
                                       "--a and --b it lists the store's curators (and exits 2).")
    agree.add_argument("--a", metavar="NAME", help="one curator (the list: run without --a / --b)")
    agree.add_argument("--b", metavar="NAME", help="the other curator")
    common(agree)
    p.set_defaults(func=run)
    return p


def _fmt(v, pct=False, money=False) -> str:
    if v is None:
        return "—"
    if pct:
        return f"{100 * v:.1f}%"
    if money:
        return f"${v:,.2f}"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _table(title, heads, rows, *, last=None, right=(), width=None):
    """Columns as wide as their content; an optional last column gets what is left of the
    terminal's width (cut with an ellipsis)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    used = 1 + sum(w + 3 for w in widths)
    roomy = width is None or used + (15 if last else 0) <= width
    for i, h in enumerate(heads):
        kw = {"no_wrap": True, "min_width": widths[i]} if roomy else {"overflow": "fold"}
        t.add_column(h, justify="right" if i in right else "left", **kw)
    if last is not None:
        if roomy:
            room = max(12, (width or 120) - used - 3)
            t.add_column(last, no_wrap=True, overflow="ellipsis", max_width=room)
        else:
            t.add_column(last, overflow="fold")
    for row in rows:
        t.add_row(*row)
    return t


def run(args) -> int:
    from archcurator.store.connection import StoreError
    from archcurator.store.reports import agreement_report, refusal_report, rules_report

    from .output import say

    db = getattr(args, "db", None)
    from archcurator.store.paths import resolve_db_path

    if not resolve_db_path(db).exists():
        return no_store("report", resolve_db_path(db))
    try:
        if args.report == "refusals":
            data = refusal_report(db)
        elif args.report == "rules":
            data = rules_report(db, curator=getattr(args, "curator", None))
        else:
            from archcurator.store.judgments import curators

            known = curators(db)
            listed = ", ".join(known) if known else "none: nobody has judged anything yet"
            for flag, name in (("--a", args.a), ("--b", args.b)):
                if not name:
                    return fail("report agreement", flag, f"name two curators with --a and --b; the store's "
                                                          f"curators: {listed}")
                if name not in known:
                    return fail("report agreement", flag, f"no curator {name!r} in the store; its curators: "
                                                          f"{listed}")
            data = agreement_report(db, args.a, args.b)
    except StoreError as exc:
        return fail("report", None, exc)
    if getattr(args, "json", False):
        say(json.dumps(data, indent=2, default=str))
        return 0
    from rich.table import Table

    from .output import console as safe_console

    console = safe_console() if sys.stdout.isatty() else safe_console(width=200)
    if args.report == "refusals":
        heads = ["author", "model", "task set", "returned", "blocked", "share", "range (runs)", "ungen.",
                 "median $ A10G"]
        rows = []
        for r in data["rows"]:
            lo, hi = r["blockedShareRange"]
            rows.append([r["author"], r["model"] or "—", r["taskSet"]["label"] or "—", str(r["returned"]),
                         str(r["blocked"]), _fmt(r["blockedShare"], pct=True),
                         f"{_fmt(lo, pct=True)}–{_fmt(hi, pct=True)}" if lo is not None else "—",
                         str(r["ungenerated"]), _fmt(r["medianQuotedCost"], money=True),
                         ", ".join(f"{k} {v}" for k, v in r["blockingRuleIds"].items()) or "—"])
        t = _table("Refusals by author, model and task set", heads, rows, last="rules that blocked",
                   right=range(3, 9), width=console.width)
        console.print(t if rows else "no designs in the store")
    elif args.report == "rules":
        heads = ["rule", "fires", "designs", "real", "false alarm", "unsure", "unjudged", "precision",
                 "≥ (95%)", "false-alarm rate (95%)", "missed", "recall", "stale"]
        rows = [[r["rule"], str(r["firings"]), str(r["designs"]), str(r["real"]), str(r["false_alarm"]),
                 str(r["unsure"]), str(r["unjudged"]), _fmt(r["precision"], pct=True),
                 _fmt(r["precisionLower"], pct=True), false_alarm_text(r), str(r["missed"]),
                 _fmt(r["recall"], pct=True), str(r["stale"]),
                 f"demoted: {r['demoted']['reason']}" if r.get("demoted") else ""] for r in data["rows"]]
        title = "Rules" + (f" (verdicts of {data['curator']})" if data.get("curator") else "")
        console.print(_table(title, heads, rows, right=range(1, 13), width=console.width, last="demoted")
                      if rows else "no findings in the store")
        if data.get("other"):
            console.print("missed defects no rule covers (kept apart): "
                          + ", ".join(f"{o['rule']} ({o['missed']})" for o in data["other"]))
    else:
        cats = data["categories"]
        t = Table(title=f"{data['a']} (rows) vs {data['b']} (columns): {data['n']} findings both judged")
        t.add_column("")
        for c in cats:
            t.add_column(c, justify="right")
        for a in cats:
            t.add_row(a, *[str(data["matrix"][a][b]) for b in cats])
        console.print(t)
        console.print(f"observed agreement {_fmt(data['observed'], pct=True)}, "
                      f"chance {_fmt(data['expected'], pct=True)}, Cohen's kappa {_fmt(data['kappa'])}")
    return 0
