"""`archcurator kb ...`: the proposition knowledge base over executed ArchitectureIQ questions.

    kb list [--all | --status S] [--json]        propositions with their evidence counts
    kb show P [--json]                           one proposition and its raw evidence rows
    kb add --claim C [--scope S ...] [--text T] [--proposed]
    kb edit P [--text T] [--scope S ...] [--claim C]
    kb merge KEEP OTHER [--text T]               OTHER is retired into KEEP (KEEP keeps its id)
    kb narrow P --when S [--when S ...] [--text T] [--as-new [--retire-parent]]
    kb retire P [--note N] | kb pin P [--off] | kb accept P | kb distinct A B [--note N]
    kb undo                                      revert your own latest operation (repeatable)
    kb log [--limit N]                           the audit log
    kb suggest [--json]                          near-duplicates and narrowing candidates
    kb pack [--json] [--out FILE]                the <= 20 prompt pack (an export to FILE is recorded)
    kb replay [--json] [--llm URL]               replay on the held-out questions, with baselines
    kb cycle [--questions N] [--solver rules|llm URL] [--execute]
                                                 the loop: answer the next questions with the pack, log each
                                                 invoked proposition's use, propose from the outcomes
    kb mine [--min-support N] ...                rule miner on the training split
    kb import-proposals FILE.jsonl               an outside solver's proposals
    kb questions [--json]                        the stored questions, by split and category
    kb rerun QUESTION [--device D] [--in-process]  re-execute a question, check the winner
    kb seed [--force]                            the demo knowledge base (shipped questions)
    kb generate [--out DIR] ...                  generate + execute the shipped question set

Conditions read like `budget < 4096`, `optimizer == sgd`, `momentum == 0`;
claims like `optimizer == adam wins`, `optimizer == sgd & momentum == 0 loses`,
`higher lr wins`. Exit 0 on success, 1 when an operation is refused (or
proposal lines were rejected), 2 when an input file or the store cannot be
read.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..sanitise import visible_lines
from .argtypes import count, positive_float, positive_int, share
from .errors import error_line, fail
from .output import say

DB_HELP = "DuckDB store (default: user data folder; $ARCHCURATOR_DB overrides)"


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "kb", help="proposition knowledge base: list, curate, suggest, pack, replay",
        description=(__doc__ or "`archcurator kb ...`").split("\n\n")[0].rstrip(".")  # no docstring under -OO
        + ". Conditions: 'budget < 4096'; claims: 'optimizer == adam wins', 'higher lr wins'.")
    sub = p.add_subparsers(dest="kb_cmd", metavar="ACTION", required=True)

    def sp(name: str, help_: str, json_flag: bool = False) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_, description=help_)
        s.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH", help=DB_HELP)
        s.add_argument("--curator", default=None, help="who is acting (default: $ARCHCURATOR_CURATOR or the user)")
        if json_flag:
            s.add_argument("--json", action="store_true", help="print JSON")
        s.set_defaults(func=run)
        return s

    s = sp("list", "propositions with evidence counts (live ones unless --all / --status)", True)
    s.add_argument("--all", action="store_true", help="every status, retired / merged / narrowed / withdrawn too")
    s.add_argument("--status", choices=["active", "proposed", "retired", "merged", "narrowed", "withdrawn"])
    s = sp("show", "one proposition, its structure and raw evidence rows", True)
    s.add_argument("id")
    s.add_argument("--limit", type=count, default=20, help="evidence rows to print (text output)")
    s = sp("add", "add a proposition (its evidence is derived at once)", True)
    s.add_argument("--claim", required=True, help="e.g. 'optimizer == adam wins', 'higher lr wins'")
    s.add_argument("--scope", action="append", default=[], help="a condition, e.g. 'budget < 4096' (repeatable)")
    s.add_argument("--text", help="the wording (default: rendered from the structure)")
    s.add_argument("--proposed", action="store_true", help="enter as proposed rather than active")
    s = sp("edit", "change a proposition's text, scope or claim", True)
    s.add_argument("id")
    s.add_argument("--text")
    s.add_argument("--scope", action="append", default=None, help="replaces the whole scope (repeatable)")
    s.add_argument("--clear-scope", action="store_true", help="no conditions")
    s.add_argument("--claim")
    s = sp("merge", "merge OTHER into KEEP: KEEP keeps its id, OTHER is retired into it; OTHER's evidence "
                    "counts only inside KEEP's scope", True)
    s.add_argument("keep")
    s.add_argument("other")
    s.add_argument("--text", help="the merged wording (default: KEEP's)")
    s = sp("narrow", "add conditions to a proposition's scope (it keeps its id); evidence re-checked, what falls "
                     "outside is inapplicable", True)
    s.add_argument("id")
    s.add_argument("--when", action="append", required=True, help="a condition to add (repeatable)")
    s.add_argument("--text")
    s.add_argument("--as-new", action="store_true", help="make a narrowed copy with its own id; the original stays")
    s.add_argument("--retire-parent", action="store_true", help="with --as-new: mark the original narrowed")
    s = sp("retire", "take a proposition out of the live set", True)
    s.add_argument("id")
    s.add_argument("--note")
    s = sp("pin", "pin a proposition (first into the pack); --off to unpin", True)
    s.add_argument("id")
    s.add_argument("--off", action="store_true")
    s = sp("accept", "a proposed proposition becomes active", True)
    s.add_argument("id")
    s = sp("distinct", "mark two propositions as not duplicates", True)
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--note")
    sp("undo", "revert the latest operation not yet undone", True)
    s = sp("log", "the audit log, newest first", True)
    s.add_argument("--limit", type=count, default=30)
    s = sp("suggest", "near-duplicate pairs and narrowing candidates (never applied)", True)
    s.add_argument("--limit", type=count, default=15, help="rows of each kind to print (text output)")
    s = sp("pack", "the prompt pack (at most 20): text, or --json; showing records nothing, an export to "
                   "--out FILE is recorded", True)
    s.add_argument("--out", metavar="FILE", help="write it to FILE (recorded as an export)")
    s = sp("replay", "the pack on held-out questions: accuracy with and without the KB, beside uniform chance, "
                     "always-A and the best single-feature rule; per source, per family, leave one family out",
           True)
    s.add_argument("--split", default="test", choices=["test", "train"], help="the held-out split (default: test)")
    s.add_argument("--no-lofo", action="store_true", help="skip the leave-one-family-out replay (it mines once "
                                                          "per family)")
    s.add_argument("--pack", action="append", default=None, metavar="FILE|current|previous|miner",
                   help="compare pack versions on the same questions (repeat: --pack A --pack B; one is compared "
                        "with the current pack): a file from `kb pack --json`, current, previous (the latest pack "
                        "exported as JSON), or miner (the raw miner's top 20 on the same training questions)")
    s.add_argument("--task-group", default=None, metavar="G",
                   help="with --pack: answer task group G's questions (regression, classification, language_model) "
                        "with weights and the miner fitted on the other groups' training questions")
    s.add_argument("--llm", metavar="URL", help="also ask an OpenAI-compatible chat endpoint (e.g. "
                                                 "http://localhost:8080/v1), each question without and with the "
                                                 "pack; key from $ARCHCURATOR_LLM_API_KEY or $OPENAI_API_KEY")
    s.add_argument("--llm-model", default="", help="model name sent to the endpoint ($ARCHCURATOR_LLM_MODEL)")
    s.add_argument("--llm-timeout", type=positive_float, default=120.0, help="seconds per request (default 120)")
    s.add_argument("--llm-retries", type=count, default=3, help="retries on timeouts, 429 and 5xx (default 3)")
    s.add_argument("--llm-limit", type=count, default=0, help="ask about the first N held-out questions only")
    s = sp("cycle", "the loop: the solver answers the next questions of the stream (not yet cycled) with the "
                    "pack; each invoked proposition gets a use (helpful / harmful / neutral) from the outcome "
                    "(the record, or a run now with --execute); proposals enter as proposed", True)
    s.add_argument("--questions", type=positive_int, default=10, help="questions of the stream (default 10)")
    s.add_argument("--solver", nargs="+", default=["rules"], metavar="rules|llm URL",
                   help="rules (default) or llm URL (an OpenAI-compatible endpoint)")
    s.add_argument("--llm-model", default="", help="model name sent to the endpoint ($ARCHCURATOR_LLM_MODEL)")
    s.add_argument("--llm-timeout", type=positive_float, default=120.0, help="seconds per request (default 120)")
    s.add_argument("--llm-retries", type=count, default=3, help="retries on timeouts, 429 and 5xx (default 3)")
    s.add_argument("--execute", action="store_true", help="execute each question now (10 seeds, the runs "
                                                          "machinery; GPU with --device cuda/auto)")
    s.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    s.add_argument("--in-process", action="store_true", help="with --execute: run here, not in the runner's child")
    s.add_argument("--no-propose", action="store_true", help="record uses only; propose nothing")
    s = sp("mine", "rule miner over the training split; proposals enter as proposed", True)
    s.add_argument("--min-support", type=positive_int, default=5)
    s.add_argument("--min-precision", type=share, default=0.7)
    s.add_argument("--max", type=positive_int, default=30, dest="max_props")
    s.add_argument("--no-pairs", action="store_true", help="single conditions only")
    s = sp("import-proposals", "an outside solver's proposals, one JSON object a line", True)
    s.add_argument("file")
    sp("questions", "the stored questions by split and category", True)
    s = sp("rerun", "re-execute a stored question's candidates (10 seeds) and check the winner", True)
    s.add_argument("question")
    s.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    s.add_argument("--in-process", action="store_true", help="run here instead of through the runner's child")
    s = sp("seed", "load the demo knowledge base (shipped questions, miner, demo proposals)", True)
    s.add_argument("--force", action="store_true", help="seed again even if seeded")
    s = sp("generate", "generate and execute the shipped question set (run once; minutes)", False)
    s.add_argument("--out", default=None, help="folder (default: the package's assets/aiq)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--groups", type=positive_int, default=3, help="dataset pairs per family")
    s.add_argument("--workers", type=positive_int, default=2)
    s.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    s.add_argument("--rule", default="study", choices=["study", "strict"],
                   help="retention rule: the study's (default) or ours (10/10 seeds, 2%% margin)")
    s.add_argument("--cache", default=None, help="a JSONL file keeping each finished execution (resume)")
    s.add_argument("--profile", default="cpu", choices=["cpu", "study"],
                   help="cpu: the shipped set (two cores' cut of the study's grids); study: the study's v2.2 world "
                        "with data variants (about 20 CPU hours: give --out and --cache, and resume)")
    p.set_defaults(func=run)
    return p


# --------------------------------------------------------------------------- output helpers

def _print_json(obj) -> None:
    say(json.dumps(obj, indent=2, default=str))


def _console(soft_wrap: bool = False):
    """Tables fit the terminal (soft_wrap False); lines of words are never cut by the console
    (soft_wrap True: a long evidence row stays one line, as `say` prints it)."""
    from .output import console

    return console(soft_wrap=soft_wrap)


def _prop_table(props, title: str, status: dict):
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title, title_justify="left")
    for c, j in (("id", "right"), ("status", "left"), ("pin", "left"), ("for", "right"), ("against", "right"),
                 ("n/a", "right"), ("lower", "right"), ("pack", "left"), ("text", "left")):
        t.add_column(c, justify=j, overflow="fold")
    for p in props:
        rank, why = status.get(p.id, (None, ""))
        t.add_row(p.label, p.status, "*" if p.pinned else "", str(p.support), str(p.contradict),
                  str(p.inapplicable), f"{p.lower:.2f}" if p.tested else "—",
                  Text(f"#{rank}" if rank else f"out: {why}"), Text(p.text))
    return t


def _scope_arg(values) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out += [x.strip() for x in v.split(";") if x.strip()]
    return out


# --------------------------------------------------------------------------- run

def run(args) -> int:
    from archcurator.store.connection import StoreError
    from archcurator.store.kb import KBError

    db = getattr(args, "db", None)
    try:
        return _dispatch(args, db)
    except KBError as e:
        from archcurator.store.paths import resolve_db_path

        return fail(f"kb {args.kb_cmd}", getattr(e, "where", None) or resolve_db_path(db), e)
    except StoreError as e:
        return fail(f"kb {args.kb_cmd}", None, e)


def _dispatch(args, db) -> int:  # noqa: C901 - one branch per action
    from rich.text import Text

    from archcurator.store import kb

    cmd = args.kb_cmd
    as_json = getattr(args, "json", False)
    actor = getattr(args, "curator", None)

    if cmd == "list":
        status = args.status or ("all" if args.all else "live")
        props = kb.list_propositions(db, status)
        pack = kb.pack_status(db)

        def where(pid):
            rank, why = pack.get(pid, (None, "not live"))
            return {"rank": rank, "entered_as": why} if rank else {"rank": None, "out_because": why}
        if as_json:
            from archcurator.store.kb_loop import EFFECTS, use_counts

            used = use_counts(db)
            _print_json({"propositions": [{**p.to_dict(), "pack": where(p.id),
                                           "uses": used.get(p.id, dict.fromkeys(EFFECTS, 0))} for p in props]})
        else:
            _console().print(_prop_table(props, f"{len(props)} propositions ({status})", pack))
        return 0

    if cmd == "show":
        return _show(kb, db, args, as_json)

    if cmd == "add":
        pid = kb.add(db, args.text, _scope_arg(args.scope), args.claim,
                     status="proposed" if args.proposed else "active", actor=actor)
        return _report_prop(kb, db, pid, "added", as_json)

    if cmd == "edit":
        scope = [] if args.clear_scope else (_scope_arg(args.scope) if args.scope is not None else None)
        p = kb.edit(db, args.id, text=args.text, scope=scope, claim=args.claim, actor=actor)
        return _report_prop(kb, db, p.id, "edited", as_json)

    if cmd == "merge":
        kept = kb.merge(db, args.keep, args.other, text=args.text, actor=actor)
        return _report_prop(kb, db, kept, f"merged P{kb.parse_id(args.other)} into", as_json)

    if cmd == "narrow":
        pid = kb.narrow(db, args.id, _scope_arg(args.when), text=args.text, as_new=args.as_new,
                        retire_parent=args.retire_parent, actor=actor)
        verb = f"narrowed P{kb.parse_id(args.id)} into a new" if args.as_new else "narrowed"
        return _report_prop(kb, db, pid, verb, as_json)

    if cmd == "retire":
        p = kb.retire(db, args.id, note=args.note, actor=actor)
        return _report_prop(kb, db, p.id, "retired", as_json)

    if cmd == "pin":
        p = (kb.unpin if args.off else kb.pin)(db, args.id, actor=actor)
        return _report_prop(kb, db, p.id, "unpinned" if args.off else "pinned", as_json)

    if cmd == "accept":
        p = kb.accept(db, args.id, actor=actor)
        return _report_prop(kb, db, p.id, "accepted", as_json)

    if cmd == "distinct":
        kb.mark_distinct(db, args.a, args.b, note=args.note, actor=actor)
        if as_json:
            _print_json({"distinct": [kb.parse_id(args.a), kb.parse_id(args.b)]})
        else:
            say(f"marked {args.a} and {args.b} distinct")
        return 0

    if cmd == "undo":
        r = kb.undo(db, actor=actor)
        if as_json:
            _print_json(r)
        else:
            say(f"undid #{r['undone']} ({r['op']}): {r['summary']}")
        return 0

    if cmd == "log":
        rows = kb.audit_log(db, args.limit)
        if as_json:
            _print_json({"log": rows})
        else:
            for r in rows:
                undone = f"  [undone by #{r['undone_by']}]" if r["undone_by"] else ""
                say(f"#{r['seq']:<4} {r['at'][:19]}  {r['actor'] or '':<10} {r['op']:<16} {r['summary']}{undone}")
        return 0

    if cmd == "suggest":
        s = kb.suggestions(db)
        if as_json:
            _print_json(s.to_dict())
            return 0
        con = _console(soft_wrap=True)
        con.print(Text.assemble(("Near-duplicates", "bold"), f" ({len(s.duplicates)}; never merged automatically: "
                                f"`kb merge KEEP OTHER` or `kb distinct A B`)"))
        for d in s.duplicates[:args.limit]:
            con.print(f"  P{d.a} ~ P{d.b}  {d.kind:<15} {d.score:5.1f}  {d.reason}")
        con.print(Text.assemble(("Narrowing candidates", "bold"), f" ({len(s.narrowing)}: `kb narrow P --when COND`)"))
        for n in s.narrowing[:args.limit]:
            con.print(f"  P{n.prop_id} + {n.condition}: {n.reason}")
        return 0

    if cmd == "pack":
        fmt = "json" if as_json else "text"
        if args.out:
            try:
                w = kb.write_pack(db, args.out, fmt, actor=actor)
            except kb.KBError as e:
                return fail("kb pack", args.out, str(e).split(": ", 1)[-1])
            say(f"wrote {w['count']} propositions to {w['path']} (export #{w['export']} recorded)", file=sys.stderr)
            return 0
        sys.stdout.write(visible_lines(kb.show_pack(db, fmt)))
        return 0

    if cmd == "replay":
        return _replay(kb, db, args, as_json)

    if cmd == "cycle":
        return _cycle(kb, db, args, as_json, actor)

    if cmd == "mine":
        ids = kb.mine(db, min_support=args.min_support, min_precision=args.min_precision, max_props=args.max_props,
                      pairs=not args.no_pairs, actor=actor)
        if as_json:
            _print_json({"proposed": ids})
        else:
            say(f"miner proposed {len(ids)} new propositions: {', '.join(f'P{i}' for i in ids) or '(none)'}")
        return 0

    if cmd == "import-proposals":
        ids, bad = kb.import_proposals(db, args.file, actor=actor)
        # each rejected line is an error line of the one form, on stderr; the rest are imported
        for b in bad:
            say(error_line("kb import-proposals", b.where, b.message), file=sys.stderr)
        if as_json:
            _print_json({"imported": ids, "rejected": [b.to_dict() for b in bad]})
        else:
            say(f"imported {len(ids)} proposals as proposed: {', '.join(f'P{i}' for i in ids) or '(none)'}"
                + (f"; {len(bad)} lines rejected" if bad else ""))
        return 1 if bad else 0

    if cmd == "questions":
        s = kb.question_summary(db)
        if as_json:
            _print_json(s)
        else:
            say(f"{s['total']} questions; {s['pairs']} pairs ({s['flipping_pairs']} with the winner flipping); "
                  f"executed on {', '.join(d or '?' for d in s['devices']) or '—'}")
            for split, cats in s["by_split"].items():
                say(f"  {split:<6} " + ", ".join(f"{c} {n}" for c, n in cats.items()))
        return 0

    if cmd == "rerun":
        return _rerun(kb, db, args, as_json)

    if cmd == "seed":
        r = kb.seed_kb(db, force=args.force)
        if as_json:
            _print_json(r)
        elif not r["seeded"]:
            say("already seeded (--force to seed again)")
        else:
            say(f"seeded: {r['questions']} questions, {len(r['curated'])} curator propositions, "
                  f"{len(r['mined'])} mined, {len(r['imported'])} imported proposals")
        return 0

    if cmd == "generate":
        from pathlib import Path

        from archcurator.core.aiq.generate import PROFILES, generate

        if args.profile != "cpu" and not args.out:
            say("archcurator kb generate: --profile study needs --out (the shipped assets/aiq is the cpu profile's)",
                file=sys.stderr)
            return 2
        out = Path(args.out) if args.out else kb.assets_dir()
        generate(out, seed=args.seed, groups=args.groups, workers=args.workers, device=args.device, rule=args.rule,
                 cache=Path(args.cache) if args.cache else None, profile=PROFILES[args.profile])
        say(f"wrote {out}/questions.jsonl, curves.jsonl.gz, manifest.json")
        return 0

    raise AssertionError(cmd)


def _replay(kb, db, args, as_json: bool) -> int:
    from archcurator.core.kb.replay import render

    if args.pack:
        return _replay_packs(db, args, as_json)
    r = kb.replay_report(db, split=args.split, lofo=not args.no_lofo)
    if args.llm:
        from archcurator.core.kb.llm import Client, LLMError, llm_replay

        try:
            client = Client(args.llm, model=args.llm_model, timeout_s=args.llm_timeout, retries=args.llm_retries)
            qs = [q for q in kb.list_questions(db, split=args.split)]
            if args.llm_limit > 0:
                qs = qs[:args.llm_limit]

            def progress(i, n):
                if not as_json and sys.stderr.isatty():
                    print(f"\r  asked {i}/{n}", end="", file=sys.stderr, flush=True)
            r["llm"] = {"endpoint": client.endpoint, "model": client.model,
                        **llm_replay(qs, kb.current_pack(db), client.ask, progress=progress)}
        except LLMError as e:
            return fail("kb replay", e.where, e.problem)
    if as_json:
        _print_json(r)
        return 0
    sys.stdout.write(visible_lines(render(r)))
    if r.get("llm"):
        from archcurator.core.kb.stats import fmt_interval

        m = r["llm"]
        d = m["difference"]
        without, with_ = (fmt_interval(m[k]["correct"], m["n"]) for k in ("without_kb", "with_kb"))
        say(f"LLM solver ({m['model']} at {m['endpoint']}), {m['n']} questions: without the pack {without}; "
              f"with it {with_}; difference {100 * d['points']:+.1f} points (95% CI {100 * d['ci95'][0]:+.1f} to "
              f"{100 * d['ci95'][1]:+.1f}); unparsed replies {m['unparsed']['without_kb']} (without) / "
              f"{m['unparsed']['with_kb']} (with)")
    return 0


def _show(kb, db, args, as_json: bool) -> int:
    from rich.text import Text

    from archcurator.core.kb.evidence import recipe_text
    from archcurator.store import kb_loop

    p = kb.get_proposition(db, args.id)
    d = kb_loop.show(db, p.id)
    if as_json:
        _print_json(d)
        return 0
    con = _console(soft_wrap=True)
    con.print(Text.assemble((p.label, "bold"), " ", p.text))
    con.print(f"  status {p.status}{', pinned' if p.pinned else ''}; origin {p.origin}; source {p.source}")
    con.print(f"  scope: {', '.join(str(c) for c in p.structure.scope) or '(none)'}")
    con.print(f"  claim: {p.structure.claim}")
    for what, ids in (("narrowed from", [p.parent_id] if p.parent_id else []), ("merged from", p.merged_from),
                      ("merged into", [p.merged_into] if p.merged_into else [])):
        if ids:
            con.print(f"  {what} {', '.join(f'P{i}' for i in ids)}")
    con.print(f"  evidence: {p.support} support, {p.contradict} contradict, {p.inapplicable} inapplicable;"
              f" Wilson 95% lower bound {p.lower:.3f}")
    for name in ("train", "heldout", "imported"):
        r = d["records"][name]
        con.print(f"  record {name:<8} {r['units_support']} for, {r['units_contradict']} against, "
                  f"{r['units_split']} split of {r['units']} units (pool x dataset); raw {r['support']} for, "
                  f"{r['contradict']} against" + ("  (shown, never ranked by)" if name != "train" else ""))
    u = d["use_counts"]
    con.print(f"  uses: {u['helpful']} helpful, {u['harmful']} harmful, {u['neutral']} neutral")
    for c in d["conflicts"]:
        con.print(Text.assemble(("  conflict: ", "bold red"), c["text"]))
    if p.heldout:
        h = p.heldout
        where = f"family-specific ({h['family_specific']})" if h.get("family_specific") else \
            f"holds in {', '.join(h.get('families_held') or []) or 'no family'}"
        con.print(f"  held out over families (miner): {h['support']} support, {h['contradict']} contradict "
                  f"in {h['folds']} folds; {where}")
    rank, why = kb.pack_status(db).get(p.id, (None, "not live"))
    con.print(f"  pack: #{rank} ({why})" if rank else f"  pack: out ({why})")

    def question_lines(r: dict, head: str) -> None:
        con.print(f"    {head}")
        if "candidates" not in r:
            return
        ds = r["dataset"]
        feats = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in ds.items()
                          if k not in ("id", "family", "task"))
        con.print(f"      {r['family']} dataset {ds['id']} ({feats or 'no features'}); pool {r['pool']}; "
                  f"gap {r['gap']:.3g}, seed win rate {r['win_rate']:.0%}" if r.get("gap") is not None else
                  f"      {r['family']} dataset {ds['id']}; pool {r['pool']}")
        for c in r["candidates"]:
            m, sd = r["means"].get(c["letter"]), r["stds"].get(c["letter"])
            score = f"{m:.4g} ± {sd:.2g}" if m is not None and sd is not None else "—"
            mark = "*" if c["letter"] == r["winner"] else " "
            con.print(f"      {mark}{c['letter']} {score:<18} {recipe_text(c, r['differs'])}")

    rows = d["evidence"]
    con.print(f"  evidence ({len(rows)} rows; recipes show the fields that differ; * the winner):")
    for r in rows[:args.limit]:
        question_lines(r, f"{r['question']:<12} {r['verdict']:<12} {r.get('category') or '':<18} {r['via']:<18} "
                          f"{r['reason']}")
    if len(rows) > args.limit:
        con.print(f"    ... {len(rows) - args.limit} more (--limit, or --json)")
    if d["uses"]:
        con.print(f"  uses ({len(d['uses'])}, newest first):")
        for r in d["uses"][:args.limit]:
            question_lines(r, f"cycle #{r['cycle']} {r['question']:<12} {r['effect']:<8} answered "
                              f"{r['answer'] or '—'}, outcome {r['outcome'] or '—'} ({r['outcome_from']}): "
                              f"{r['reason']}")
    return 0


def _cycle(kb, db, args, as_json: bool, actor) -> int:
    from archcurator.store import kb_loop

    solver, *rest = args.solver
    if solver not in ("rules", "llm") or (solver == "rules" and rest) or (solver == "llm" and len(rest) != 1):
        return fail("kb cycle", None, "--solver is 'rules' or 'llm URL'")
    ask, name = None, "rules"
    if solver == "llm":
        from archcurator.core.kb.llm import Client, LLMError

        try:
            client = Client(rest[0], model=args.llm_model, timeout_s=args.llm_timeout, retries=args.llm_retries)
        except LLMError as e:
            return fail("kb cycle", e.where, e.problem)
        ask, name = client.ask, f"llm {client.model} at {client.endpoint}"
    execute = None
    if args.execute:
        from archcurator.core.aiq.execute import execute_question, runs_runner

        runner, current = None, {}
        if not args.in_process:
            from archcurator.store.runs import persist_result

            def record(spec, result):
                try:
                    persist_result(db, spec, result, question_id=current.get("id"))
                except Exception as e:  # noqa: BLE001 - recording must not lose the answer
                    say(f"note: run not recorded ({e})", file=sys.stderr)
            runner = runs_runner(device=args.device, on_result=record)

        def execute(q: dict) -> dict:
            current["id"] = q["question_id"]
            return execute_question(q, device=args.device, runner=runner)

    def progress(i, n):
        if not as_json and sys.stderr.isatty():
            print(f"\r  answered {i}/{n}", end="", file=sys.stderr, flush=True)
    try:
        r = kb_loop.cycle(db, questions=args.questions, solver=solver, ask=ask, solver_name=name, execute=execute,
                          propose=not args.no_propose, actor=actor, progress=progress)
    except Exception as e:
        from archcurator.core.aiq.execute import RunFailed
        from archcurator.core.kb.llm import LLMError

        if isinstance(e, LLMError):
            return fail("kb cycle", e.where, e.problem)
        if isinstance(e, RunFailed):
            return fail("kb cycle", None, e)
        raise
    if as_json:
        _print_json(r)
        return 0
    s = r["summary"]
    say(f"cycle #{r['cycle']} ({r['solver']}, pack of {len(r['pack_ids'])}): {s['questions']} questions, "
        f"{s['correct']}/{s['with_outcome']} right; uses {s['uses']['helpful']} helpful, {s['uses']['harmful']} "
        f"harmful, {s['uses']['neutral']} neutral; proposed {len(r['proposed'])}"
        + (f" ({', '.join(f'P{i}' for i in r['proposed'])})" if r["proposed"] else "")
        + (f"; executed {s['executed']}, reproduced {s['reproduced']}" if s["executed"] else "")
        + f"; {r['stream_left']} questions left in the stream")
    for st in r["steps"]:
        used = ", ".join(f"P{u['prop_id']} {u['effect']}" for u in st["uses"]) or "no proposition"
        mark = {True: "right", False: "wrong", None: "no outcome"}[st["correct"]]
        say(f"  {st['question_id']:<12} answered {st['answer'] or '—'} ({st['by']}), outcome {st['outcome'] or '—'}"
            f" ({st['outcome_from']}): {mark}; {used}" + (f"; proposed {len(st['proposals'])}" if st["proposals"]
                                                          else ""))
    return 0


def _replay_packs(db, args, as_json: bool) -> int:
    from archcurator.core.kb.stats import fmt_interval
    from archcurator.store.kb_loop import replay_packs

    r = replay_packs(db, args.pack, split=args.split, task_group=args.task_group)
    if as_json:
        _print_json(r)
        return 0
    where = f"task group {r['task_group']} (every split)" if r["task_group"] else f"split {r['split']}"
    say(f"Pack versions on the same {r['n']} questions ({where}, {r['pools']} candidate pools; weights fitted on "
        f"{r['train_n']} training questions)")
    say(f"  prior ({r['prior']['rule']}): {fmt_interval(r['prior']['correct'], r['prior']['n'])}")
    for p in r["packs"]:
        say(f"  {p['pack']} ({p['size']} propositions): {fmt_interval(p['correct'], p['n'])}")
    for d in r["difference"]:
        verdict = "beyond the noise" if d["excludes_zero"] else "within the noise (the interval holds 0)"
        say(f"  {d['a']} minus {d['b']}: {100 * d['value']:+.1f} points (pool bootstrap 95% CI "
            f"{100 * d['ci'][0]:+.1f} to {100 * d['ci'][1]:+.1f}; paired Newcombe {100 * d['newcombe_ci95'][0]:+.1f} "
            f"to {100 * d['newcombe_ci95'][1]:+.1f}), {verdict}")
        say(f"    they answer {len(d['disagree'])} questions differently: {d['a']} right on "
            f"{d['a_right_b_wrong']} of them, {d['b']} on {d['b_right_a_wrong']}")
    return 0


def _report_prop(kb, db, pid: int, verb: str, as_json: bool) -> int:
    p = kb.get_proposition(db, pid)
    if as_json:
        _print_json(p.to_dict())
    else:
        say(f"{verb} {p.label}: {p.text}  [{p.status}; {p.support} for, {p.contradict} against, "
            f"{p.inapplicable} inapplicable]")
    return 0


def _rerun(kb, db, args, as_json: bool) -> int:
    from archcurator.core.aiq.execute import RunFailed, execute_question, runs_runner
    from archcurator.core.aiq.spec import SpecError

    q = kb.get_question(db, args.question)
    runner = None
    if not args.in_process:
        from archcurator.store.runs import persist_result

        def record(spec, result):
            try:
                persist_result(db, spec, result, question_id=q["question_id"])
            except Exception as e:  # noqa: BLE001 - recording must not lose the answer
                say(f"note: run not recorded ({e})", file=sys.stderr)

        runner = runs_runner(device=args.device, on_result=record)
    try:
        out = execute_question(q, device=args.device, runner=runner)
    except (RunFailed, SpecError) as e:
        return fail("kb rerun", args.question, e)
    sig = out["significance"]
    answer = {
        "question_id": q["question_id"], "recorded_winner": out["recorded_letter"],
        "winner": out["winner_letter"], "reproduced": out["reproduced"], "kept": sig["passed"],
        "win_rate": sig["win_rate"], "gap": sig["gap"], "device": out["results"][0]["device"],
        "means": {ch["letter"]: r["mean"] for ch, r in zip(q["choices"], out["results"])},
    }
    if as_json:
        _print_json(answer)
    else:
        say(f"{q['question_id']}: winner {answer['winner']} (recorded {answer['recorded_winner']}) -> "
              f"{'reproduced' if answer['reproduced'] else 'NOT reproduced'}; win rate {sig['win_rate']:.0%}, "
              f"kept by the rule: {'yes' if sig['passed'] else 'no (' + sig['reason'] + ')'}; "
              f"device {answer['device']}")
    return 0 if out["reproduced"] else 1
