"""The knowledge base in the store: questions, propositions, evidence, curator operations.

Everything the CLI (`archcurator kb ...`) and the app's knowledge-base screen
need; every function takes `db` (a path, None for the default store, or an
open connection) and opens the store for its own unit of work.

Reading
    list_propositions(db, status="live") -> [PropRow]     # with evidence counts
    get_proposition(db, pid) -> PropRow ; evidence(db, pid) -> [dict]
    suggestions(db) -> Suggestions(duplicates, narrowing)
    current_pack(db) -> [PackEntry] ; pack_json / pack_text from core.kb.pack
    audit_log(db, limit=50) -> [dict] ; replay_report(db) -> dict
    list_questions(db, split=None) -> [dict] ; question_views(db)
Curator operations (one transaction each, one audit row each; undo reverts the acting
curator's own latest step)
    add, edit, merge, narrow, retire, pin / unpin, accept, mark_distinct, undo
Proposing
    mine(db) ; import_proposals(db, path)
Questions
    import_questions(db, questions) ; import_bundle(db, path) ; seed_kb(db)
Exports
    export_pack(db, fmt="json"|"text", destination=None) -> (content, export id)   # recorded
    show_pack(db, fmt) -> content                                                 # records nothing
"""

from __future__ import annotations

import getpass
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archcurator.core.aiq.spec import category_of, recipe_id
from archcurator.core.kb import evidence as ev
from archcurator.core.kb.features import QuestionView, view
from archcurator.core.kb.miner import mine as mine_rules
from archcurator.core.kb.miner import scope_vocabulary
from archcurator.core.kb.pack import CAP, PackEntry, build_pack, canonical, content_hash, pack_json, pack_text
from archcurator.core.kb.proposals import ProposalRejection
from archcurator.core.kb.props import Condition, PropError, Structure, clean_text
from archcurator.core.kb.stats import wilson_lower
from archcurator.core.kb.suggest import DuplicatePair, NarrowSuggestion, PropLite, clusters, duplicate_pairs, narrowing

from .connection import DB, one, reading, transaction, utcnow

LIVE = ("active", "proposed")
STATUSES = ("active", "proposed", "retired", "merged", "narrowed", "withdrawn")
SEEDED_KEY = "kb_seeded_at"
UNDOABLE = ("add", "edit", "merge", "narrow", "retire", "pin", "unpin", "accept", "distinct",
            "mine", "import-proposals", "cycle")


class KBError(ValueError):
    """A curator operation that cannot be done; one line saying why."""


class KBFileError(KBError):
    """An input file that cannot be read at all: the error line names the file, not the store."""

    def __init__(self, where: str | os.PathLike, problem: str):
        super().__init__(problem)
        self.where = where


def _actor(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return os.environ.get("ARCHCURATOR_CURATOR") or getpass.getuser()
    except Exception:  # noqa: BLE001
        return "curator"


def label(pid: int) -> str:
    return f"P{pid}"


def parse_id(text: Any) -> int:
    s = str(text).strip()
    if s[:1] in ("P", "p"):
        s = s[1:]
    try:
        return int(s)
    except ValueError:
        raise KBError(f"not a proposition id: {text!r} (e.g. P12 or 12)") from None


# --------------------------------------------------------------------------- rows

@dataclass
class PropRow:
    id: int
    text: str
    structure: Structure
    status: str
    pinned: bool
    origin: str
    source: str | None
    parent_id: int | None
    merged_into: int | None
    merged_from: list[int]
    note: str | None
    created_at: Any
    updated_at: Any
    support: int = 0
    contradict: int = 0
    inapplicable: int = 0
    heldout: dict | None = None

    @property
    def label(self) -> str:
        return label(self.id)

    @property
    def tested(self) -> int:
        return self.support + self.contradict

    @property
    def lower(self) -> float:
        return wilson_lower(self.support, self.tested)

    @property
    def live(self) -> bool:
        return self.status in LIVE

    def lite(self) -> PropLite:
        return PropLite(self.id, self.text, self.structure, self.status, self.pinned, self.support, self.contradict)

    def to_dict(self) -> dict:
        return {
            "id": self.id, "label": self.label, "text": self.text,
            "scope": [str(c) for c in self.structure.scope], "claim": self.structure.claim.to_obj(),
            "claim_text": str(self.structure.claim), "structure": self.structure.to_obj(),
            "status": self.status, "pinned": self.pinned, "origin": self.origin, "source": self.source,
            "parent_id": self.parent_id, "merged_into": self.merged_into, "merged_from": self.merged_from,
            "note": self.note, "supports": self.support, "contradicts": self.contradict,
            "inapplicable": self.inapplicable, "wilson_lower": round(self.lower, 4),
            "heldout": self.heldout,
            "created_at": str(self.created_at), "updated_at": str(self.updated_at),
        }


_PROP_COLS = ("id", "text", "structure", "structure_key", "status", "pinned", "origin", "source", "parent_id",
              "merged_into", "merged_from", "note", "created_at", "updated_at", "heldout")
_EV_COLS = ("prop_id", "question_id", "verdict", "reason", "split", "via", "recorded_at")


def _structure(js: str) -> Structure:
    o = json.loads(js)
    return Structure.from_obj(o.get("scope") or [], o["claim"])


def _row_to_prop(r: Sequence) -> PropRow:
    d = dict(zip(_PROP_COLS, r[:len(_PROP_COLS)]))
    extra = r[len(_PROP_COLS):]
    return PropRow(
        id=d["id"], text=d["text"], structure=_structure(d["structure"]), status=d["status"],
        pinned=bool(d["pinned"]), origin=d["origin"], source=d["source"], parent_id=d["parent_id"],
        merged_into=d["merged_into"], merged_from=json.loads(d["merged_from"]) if d["merged_from"] else [],
        note=d["note"], created_at=d["created_at"], updated_at=d["updated_at"],
        support=int(extra[0] or 0) if extra else 0, contradict=int(extra[1] or 0) if extra else 0,
        inapplicable=int(extra[2] or 0) if extra else 0,
        heldout=json.loads(d["heldout"]) if d.get("heldout") else None,
    )


_SELECT = (
    "SELECT " + ", ".join(f"p.{c}" for c in _PROP_COLS) + ","
    " count(*) FILTER (WHERE e.verdict = 'support'),"
    " count(*) FILTER (WHERE e.verdict = 'contradict'),"
    " count(*) FILTER (WHERE e.verdict = 'inapplicable')"
    " FROM kb_propositions p LEFT JOIN kb_evidence e ON e.prop_id = p.id"
)
_GROUP = " GROUP BY " + ", ".join(f"p.{c}" for c in _PROP_COLS)


def list_propositions(db: DB = None, status: str | Iterable[str] = "live") -> list[PropRow]:
    """Propositions with their evidence counts. STATUS: "live" (active + proposed), "all",
    one status or several."""
    if status == "live":
        wanted: tuple[str, ...] | None = LIVE
    elif status == "all" or status is None:
        wanted = None
    elif isinstance(status, str):
        wanted = (status,)
    else:
        wanted = tuple(status)
    sql = _SELECT
    params: list = []
    if wanted:
        sql += " WHERE p.status IN (" + ", ".join("?" for _ in wanted) + ")"
        params += list(wanted)
    sql += _GROUP + " ORDER BY p.id"
    with reading(db) as con:
        return [_row_to_prop(r) for r in con.execute(sql, params).fetchall()]


def get_proposition(db: DB, pid: int | str) -> PropRow:
    pid = parse_id(pid)
    with reading(db) as con:
        r = con.execute(_SELECT + " WHERE p.id = ?" + _GROUP, [pid]).fetchone()
    if r is None:
        raise KBError(f"no proposition {label(pid)}")
    return _row_to_prop(r)


def evidence(db: DB, pid: int | str, *, verdict: str | None = None) -> list[dict]:
    """The raw evidence rows of one proposition, with each question's family and category."""
    pid = parse_id(pid)
    sql = ("SELECT e.question_id, e.verdict, e.reason, e.split, e.via, e.recorded_at, q.family, q.category,"
           " q.correct_letter, q.pair_id FROM kb_evidence e LEFT JOIN aiq_questions q USING (question_id)"
           " WHERE e.prop_id = ?")
    params: list = [pid]
    if verdict:
        sql += " AND e.verdict = ?"
        params.append(verdict)
    sql += " ORDER BY e.verdict, e.question_id"
    with reading(db) as con:
        rows = con.execute(sql, params).fetchall()
    keys = ("question_id", "verdict", "reason", "split", "via", "recorded_at", "family", "category",
            "correct_letter", "pair_id")
    return [dict(zip(keys, r)) for r in rows]


# --------------------------------------------------------------------------- questions

@dataclass
class ImportSummary:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"imported": self.imported, "skipped": self.skipped,
                "rejected": [{"where": w, "message": m} for w, m in self.rejected]}


def _insert_many(con, table: str, cols: Sequence[str], rows: Sequence[Sequence], chunk: int = 400) -> None:
    if not rows:
        return
    marks = "(" + ", ".join("?" for _ in cols) + ")"
    for i in range(0, len(rows), chunk):
        part = rows[i:i + chunk]
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES " + ", ".join(marks for _ in part)
        con.execute(sql, [v for r in part for v in r])


def import_questions(db: DB, questions: Iterable[dict], *, source: str | None = None,
                     refresh: bool = True, origin: str = "imported") -> ImportSummary:
    """Store executed questions (ours or read from an ArchitectureIQ bundle). A question whose
    id is stored adds nothing. Evidence of live propositions is extended to the new questions.
    ORIGIN: "shipped" (the generated set) or "imported"; an imported question's split is "test"
    unless it is marked otherwise."""
    if origin not in ("shipped", "imported"):
        raise KBError(f"a question's origin is shipped or imported, not {origin!r}")
    from archcurator.core.aiq.spec import SpecError, validate_question

    out = ImportSummary()
    now = utcnow()
    qrows, crows, orows = [], [], []
    with transaction(db) as con:
        have = {r[0] for r in con.execute("SELECT question_id FROM aiq_questions").fetchall()}
        have_c = {(r[0], r[1]) for r in con.execute("SELECT dataset_id, candidate_id FROM aiq_candidates").fetchall()}
        for i, q in enumerate(questions):
            where = f"{source or 'questions'}[{i}]"
            try:
                validate_question(q)
            except SpecError as e:
                out.rejected.append((where, str(e)))
                continue
            qid = str(q["question_id"])
            if qid in have:
                out.skipped.append(qid)
                continue
            have.add(qid)
            pair = q.get("pair") or {}
            sig = q.get("significance") or {}
            dev = (q.get("evaluation") or {}).get("device")
            split = q.get("split") if q.get("split") in ("train", "test") else "test"
            qrows.append((qid, q["family"], category_of(q), q.get("dataset_id"), split,
                          pair.get("pair_id"), pair.get("partner"), pair.get("flip"), q["correct_letter"],
                          len(q["choices"]), dev, bool(q.get("synthetic", True)), sig.get("gap"),
                          sig.get("win_rate"), q.get("source") or source, json.dumps(q, separators=(",", ":")), now,
                          origin))
            for ch in q["choices"]:
                c = ch["candidate"]
                key = (q.get("dataset_id") or c.get("dataset_id"), ch["candidate_id"])
                if key not in have_c:
                    have_c.add(key)
                    crows.append((key[0], key[1], ch.get("recipe_id") or recipe_id(c), q["family"],
                                  json.dumps(c, sort_keys=True)))
                r = ch.get("result") or {}
                orows.append((qid, ch["letter"], ch["candidate_id"], ch["letter"] == q["correct_letter"],
                              r.get("mean"), r.get("std"), r.get("failed_seeds"),
                              json.dumps(r.get("finals")) if r.get("finals") is not None else None, dev))
            out.imported.append(qid)
        _insert_many(con, "aiq_questions",
                     ("question_id", "family", "category", "dataset_id", "split", "pair_id", "partner_id", "flip",
                      "correct_letter", "num_choices", "device", "synthetic", "gap", "win_rate", "source",
                      "question", "imported_at", "origin"), qrows)
        _insert_many(con, "aiq_candidates", ("dataset_id", "candidate_id", "recipe_id", "family", "spec"), crows)
        _insert_many(con, "aiq_outcomes", ("question_id", "letter", "candidate_id", "is_winner", "mean", "std",
                                           "failed_seeds", "finals", "device"), orows)
        if refresh and out.imported:
            _extend_evidence(con, set(out.imported))
    return out


def import_bundle(db: DB, path: str | os.PathLike) -> ImportSummary:
    """`archcurator import` of an ArchitectureIQ bundle or one of our question files.
    Raises core.aiq.bundle.BundleError (one line naming the file) when PATH cannot be read."""
    from archcurator.core.aiq.bundle import read_bundle

    b = read_bundle(path)
    s = import_questions(db, b.questions, source=str(path))
    s.rejected = list(b.rejected) + s.rejected
    return s


def list_questions(db: DB = None, split: str | None = None) -> list[dict]:
    """Stored questions (each with its ``origin`` and stored ``split`` set on the dict)."""
    sql = "SELECT question, origin, split FROM aiq_questions"
    params: list = []
    if split:
        sql += " WHERE split = ?"
        params.append(split)
    sql += " ORDER BY question_id"
    with reading(db) as con:
        return [{**json.loads(r[0]), "origin": r[1] or "imported", "split": r[2]}
                for r in con.execute(sql, params).fetchall()]


def get_question(db: DB, qid: str) -> dict:
    with reading(db) as con:
        r = con.execute("SELECT question FROM aiq_questions WHERE question_id = ?", [qid]).fetchone()
    if r is None:
        raise KBError(f"no question {qid}")
    return json.loads(r[0])


def question_views(db: DB = None, split: str | None = None) -> list[QuestionView]:
    return [view(q) for q in list_questions(db, split)]


def question_summary(db: DB = None) -> dict:
    with reading(db) as con:
        rows = con.execute("SELECT split, category, count(*) FROM aiq_questions GROUP BY ALL ORDER BY ALL").fetchall()
        pairs = one(con.execute("SELECT count(DISTINCT pair_id), count(DISTINCT pair_id) FILTER (WHERE flip)"
                                " FROM aiq_questions WHERE pair_id IS NOT NULL"))
        devices = [r[0] for r in con.execute("SELECT DISTINCT device FROM aiq_questions ORDER BY 1").fetchall()]
    by: dict = {}
    for split, cat, n in rows:
        by.setdefault(split, {})[cat] = n
    return {"by_split": by, "total": sum(n for *_, n in rows), "pairs": pairs[0], "flipping_pairs": pairs[1],
            "devices": devices}


# --------------------------------------------------------------------------- snapshots & audit

def _views_by_id(con) -> dict[str, QuestionView]:
    return {r[0]: view({**json.loads(r[1]), "split": r[3]}, origin=r[2] or "imported") for r in
            con.execute("SELECT question_id, question, origin, split FROM aiq_questions").fetchall()}


def _snap_prop(con, pid: int) -> dict | None:
    r = con.execute("SELECT " + ", ".join(_PROP_COLS) + " FROM kb_propositions WHERE id = ?", [pid]).fetchone()
    if r is None:
        return None
    row = {k: (str(v) if k in ("created_at", "updated_at") else v) for k, v in zip(_PROP_COLS, r)}
    evs = con.execute("SELECT question_id, verdict, reason, split, via FROM kb_evidence WHERE prop_id = ?"
                      " ORDER BY question_id", [pid]).fetchall()
    row["evidence"] = [list(e) for e in evs]
    return row


def _snap_distinct(con) -> list[list]:
    return [list(r) for r in con.execute("SELECT a, b, note FROM kb_distinct ORDER BY a, b").fetchall()]


def _snapshot(con, pids: Iterable[int], distinct: bool = False) -> dict:
    out: dict[str, Any] = {"props": {str(p): _snap_prop(con, p) for p in pids}}
    if distinct:
        out["distinct"] = _snap_distinct(con)
    return out


def _audit(con, op: str, pids: Sequence[int], args: dict, summary: str, before: dict, actor: str | None,
           undo_of: int | None = None) -> int:
    after = _snapshot(con, pids, distinct="distinct" in before)
    seq = con.execute(
        "INSERT INTO kb_audit (logged_at, actor, op, prop_ids, args, summary, before, after, undo_of)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        [utcnow(), _actor(actor), op, json.dumps(list(pids)), json.dumps(args, default=str), summary,
         json.dumps(before, default=str), json.dumps(after, default=str), undo_of]).fetchone()[0]
    return int(seq)


def audit_log(db: DB = None, limit: int | None = 50) -> list[dict]:
    sql = ("SELECT a.seq, a.logged_at, a.actor, a.op, a.prop_ids, a.args, a.summary, a.undo_of,"
           " (SELECT min(u.seq) FROM kb_audit u WHERE u.undo_of = a.seq) AS undone_by"
           " FROM kb_audit a ORDER BY a.seq DESC")
    if limit:
        sql += f" LIMIT {int(limit)}"
    with reading(db) as con:
        rows = con.execute(sql).fetchall()
    keys = ("seq", "at", "actor", "op", "prop_ids", "args", "summary", "undo_of", "undone_by")
    out = []
    for r in rows:
        d = dict(zip(keys, r))
        d["prop_ids"] = json.loads(d["prop_ids"] or "[]")
        d["args"] = json.loads(d["args"] or "{}")
        d["at"] = str(d["at"])
        out.append(d)
    return out


# --------------------------------------------------------------------------- writing helpers

def _next_id(con) -> int:
    return int(con.execute("SELECT nextval('kb_prop_ids')").fetchone()[0])


def _insert_prop(con, *, text: str, structure: Structure, status: str, origin: str, source: str | None,
                 pinned: bool = False, parent_id: int | None = None, merged_from: list[int] | None = None,
                 note: str | None = None, heldout: dict | None = None) -> int:
    pid = _next_id(con)
    now = utcnow()
    con.execute("INSERT INTO kb_propositions (" + ", ".join(_PROP_COLS) + ") VALUES ("
                + ", ".join("?" for _ in _PROP_COLS) + ")",
                [pid, text, json.dumps(structure.to_obj(), sort_keys=True), structure.key, status, pinned, origin,
                 source, parent_id, None, json.dumps(merged_from) if merged_from else None, note, now, now,
                 json.dumps(heldout, sort_keys=True) if heldout is not None else None])
    return pid


def _set_evidence(con, pid: int, rows: Iterable[ev.EvidenceRow]) -> None:
    con.execute("DELETE FROM kb_evidence WHERE prop_id = ?", [pid])
    now = utcnow()
    _insert_many(con, "kb_evidence", _EV_COLS,
                 [(pid, r.question_id, r.verdict, r.reason, r.split, r.via, now) for r in rows])


def _get_rows(con, pid: int) -> list[ev.EvidenceRow]:
    return [ev.EvidenceRow(*r) for r in con.execute(
        "SELECT question_id, verdict, reason, split, via FROM kb_evidence WHERE prop_id = ? ORDER BY question_id",
        [pid]).fetchall()]


def _prop(con, pid: int) -> PropRow:
    r = con.execute(_SELECT + " WHERE p.id = ?" + _GROUP, [pid]).fetchone()
    if r is None:
        raise KBError(f"no proposition {label(pid)}")
    return _row_to_prop(r)


def _live(con, pid: int, what: str) -> PropRow:
    p = _prop(con, pid)
    if not p.live:
        raise KBError(f"{p.label} is {p.status}; only active or proposed propositions can be {what}")
    return p


def _update(con, pid: int, **cols) -> None:
    cols["updated_at"] = utcnow()
    sets = ", ".join(f"{k} = ?" for k in cols)
    con.execute(f"UPDATE kb_propositions SET {sets} WHERE id = ?", [*cols.values(), pid])


def _derive(con, structure: Structure, views: dict[str, QuestionView] | None = None) -> list[ev.EvidenceRow]:
    views = views if views is not None else _views_by_id(con)
    return ev.derive(structure, views.values())


def _extend_evidence(con, new_qids: set[str]) -> None:
    """Judge NEW_QIDS for every live proposition (after new questions arrive)."""
    views = {k: v for k, v in _views_by_id(con).items() if k in new_qids}
    if not views:
        return
    rows = []
    now = utcnow()
    for pid, js in con.execute("SELECT id, structure FROM kb_propositions WHERE status IN ('active', 'proposed')"
                               ).fetchall():
        st = _structure(js)
        for r in ev.derive(st, views.values()):
            rows.append((pid, r.question_id, r.verdict, r.reason, r.split, r.via, now))
    _insert_many(con, "kb_evidence", _EV_COLS, rows)


def _structure_from(scope: Any, claim: Any) -> Structure:
    try:
        return Structure.from_obj(scope or [], claim)
    except PropError as e:
        raise KBError(str(e)) from None


def _words(text: str | None) -> str | None:
    """A curator's wording as stored (`props.clean_text`: one line, plain text, at most MAX_TEXT
    characters), or None when none was given (blank counts as none)."""
    if text is None or not text.strip():
        return None
    try:
        return clean_text(text)
    except PropError as e:
        raise KBError(str(e)) from None


# --------------------------------------------------------------------------- operations

def add(db: DB, text: str | None, scope: Any, claim: Any, *, status: str = "active", origin: str = "curator",
        source: str | None = None, pinned: bool = False, actor: str | None = None) -> int:
    """A new proposition; its evidence is derived from the stored questions at once."""
    st = _structure_from(scope, claim)
    words = _words(text)
    if status not in LIVE:
        raise KBError(f"a new proposition is active or proposed, not {status!r}")
    with transaction(db) as con:
        pid = _insert_prop(con, text=words or st.render(), structure=st, status=status, origin=origin,
                           source=source or _actor(actor), pinned=pinned)
        _set_evidence(con, pid, _derive(con, st))
        _audit(con, "add", [pid], {"text": text, "structure": st.to_obj(), "status": status}, f"added {label(pid)}",
               {"props": {str(pid): None}}, actor)
    return pid


def edit(db: DB, pid: int | str, *, text: str | None = None, scope: Any = None, claim: Any = None,
         actor: str | None = None) -> PropRow:
    """Change a proposition's text and/or structure. A new structure re-derives its evidence
    (rows inherited by a merge are kept)."""
    pid = parse_id(pid)
    words = _words(text)
    with transaction(db) as con:
        p = _live(con, pid, "edited")
        before = _snapshot(con, [pid])
        cols: dict[str, Any] = {}
        changed = []
        if scope is not None or claim is not None:
            st = _structure_from(scope if scope is not None else [c.to_obj() for c in p.structure.scope],
                                 claim if claim is not None else p.structure.claim.to_obj())
            if st.key != p.structure.key:
                cols.update(structure=json.dumps(st.to_obj(), sort_keys=True), structure_key=st.key)
                inherited = [r for r in _get_rows(con, pid) if r.via.startswith("merged from")]
                _set_evidence(con, pid, ev.union(_derive(con, st), inherited, "merged"))
                changed.append("structure")
        if words is not None and words != p.text:
            cols["text"] = words
            changed.append("text")
        if not changed:
            raise KBError(f"{p.label}: nothing to change")
        _update(con, pid, **cols)
        _audit(con, "edit", [pid], {"text": text, "scope": scope, "claim": claim},
               f"edited {p.label} ({', '.join(changed)})", before, actor)
        return _prop(con, pid)


def merge(db: DB, keep: int | str, other: int | str, *, text: str | None = None, actor: str | None = None) -> int:
    """Merge OTHER into KEEP. KEEP keeps its id, structure and text (unless TEXT) and stays live;
    OTHER is retired into it (status ``merged``, ``merged_into`` KEEP). KEEP's evidence stays as
    it is, plus OTHER's rows re-judged under KEEP's structure: a question KEEP's scope and claim
    do not test is kept as ``inapplicable`` and counts for nothing. KEEP is pinned if either was.
    Returns KEEP's id."""
    a, b = parse_id(keep), parse_id(other)
    words = _words(text)
    if a == b:
        raise KBError("cannot merge a proposition with itself")
    with transaction(db) as con:
        pa, pb = _live(con, a, "merged"), _live(con, b, "merged")
        before = _snapshot(con, [a, b])
        views = _views_by_id(con)
        theirs = ev.recheck(_get_rows(con, b), pa.structure, views, via=f"merged from {pb.label}")
        theirs = [r if r.verdict != "inapplicable" else ev.EvidenceRow(
            r.question_id, "inapplicable", f"outside {pa.label}'s scope or claim", r.split, r.via) for r in theirs]
        rows = ev.union(_get_rows(con, a), theirs, f"merged from {pb.label}")
        _set_evidence(con, a, rows)
        sources = [*pa.merged_from, b]
        status = "active" if "active" in (pa.status, pb.status) else "proposed"
        cols: dict[str, Any] = {"merged_from": json.dumps(sources), "pinned": pa.pinned or pb.pinned,
                                "status": status}
        if words and words != pa.text:
            cols["text"] = words
        _update(con, a, **cols)
        _update(con, b, status="merged", merged_into=a, pinned=False)
        _audit(con, "merge", [a, b], {"keep": a, "other": b, "text": text},
               f"merged {pb.label} into {pa.label}", before, actor)
    return a


def _narrowed_text(p: PropRow, child: Structure, conds: Sequence[Condition]) -> str:
    """The words of a narrowed proposition say its scope (a solver reads the words, so words that
    still read as the broad rule would undo the narrowing): rendered again from the structure, or a
    curator's own words with the added conditions before them."""
    if p.text == p.structure.render():
        return child.render()
    added = " and ".join(str(c) for c in conds)
    try:
        return clean_text(f"When {added}: {p.text}")
    except PropError:
        return child.render()


def narrow(db: DB, pid: int | str, conditions: Iterable[Any], *, text: str | None = None,
           as_new: bool = False, retire_parent: bool = False, actor: str | None = None) -> int:
    """Add CONDITIONS to PID's scope; its evidence is re-checked under the narrower structure (rows
    whose question falls outside are kept as inapplicable; questions only the narrower scope
    tests are added). By default PID itself is narrowed and keeps its id; AS_NEW makes a child
    with its own id instead and leaves the parent as it is (unless RETIRE_PARENT marks it
    ``narrowed``). Returns the id of the narrowed proposition."""
    pid = parse_id(pid)
    words = _words(text)
    try:
        conds = [c if isinstance(c, Condition) else Condition.from_obj(c) for c in conditions]
    except PropError as e:
        raise KBError(str(e)) from None
    if not conds:
        raise KBError("narrow needs at least one condition (e.g. 'budget < 4096')")
    if retire_parent and not as_new:
        raise KBError("only a narrowed copy (--as-new) leaves a parent to retire")
    with transaction(db) as con:
        p = _live(con, pid, "narrowed")
        child_st = p.structure.narrowed(conds)
        if child_st.key == p.structure.key:
            raise KBError(f"{p.label} already has {', '.join(str(c) for c in conds)} in its scope")
        before = _snapshot(con, [pid])
        views = _views_by_id(con)
        added = ", ".join(str(c) for c in conds)
        if not as_new:
            rows = ev.recheck(_get_rows(con, pid), child_st, views, via=f"narrowed (+ {added})")
            rows = ev.union(rows, _derive(con, child_st, views), "derived")
            _set_evidence(con, pid, rows)
            cols: dict[str, Any] = {"structure": json.dumps(child_st.to_obj(), sort_keys=True),
                                    "structure_key": child_st.key}
            cols["text"] = words or _narrowed_text(p, child_st, conds)
            _update(con, pid, **cols)
            _audit(con, "narrow", [pid], {"conditions": [str(c) for c in conds], "text": text},
                   f"narrowed {p.label} (+ {added})", before, actor)
            return pid
        rows = ev.recheck(_get_rows(con, pid), child_st, views, via=f"narrowed from {p.label}")
        rows = ev.union(rows, _derive(con, child_st, views), "derived")
        child = _insert_prop(con, text=words or _narrowed_text(p, child_st, conds), structure=child_st, status=p.status,
                             origin="narrow", source=f"narrowed from {p.label}", pinned=False, parent_id=pid)
        _set_evidence(con, child, rows)
        if retire_parent:
            _update(con, pid, status="narrowed", pinned=False)
        before["props"][str(child)] = None
        _audit(con, "narrow", [pid, child], {"conditions": [str(c) for c in conds], "text": text,
                                             "as_new": True, "retire_parent": retire_parent},
               f"narrowed {p.label} into a new {label(child)} (+ {added})", before, actor)
    return child


def _set_status(db: DB, pid: int | str, op: str, summary: str, actor: str | None, allowed: Sequence[str],
                check=None, **cols) -> PropRow:
    """One status/pin change in one transaction; CHECK(con, prop), run inside it, may refuse."""
    pid = parse_id(pid)
    with transaction(db) as con:
        p = _prop(con, pid)
        if p.status not in allowed:
            raise KBError(f"{p.label} is {p.status}; cannot {op} it")
        if check is not None:
            check(con, p)
        before = _snapshot(con, [pid])
        _update(con, pid, **cols)
        _audit(con, op, [pid], cols, summary.format(label=p.label), before, actor)
        return _prop(con, pid)


def retire(db: DB, pid: int | str, *, note: str | None = None, actor: str | None = None) -> PropRow:
    return _set_status(db, pid, "retire", "retired {label}" + (f": {note}" if note else ""), actor, LIVE,
                       status="retired", pinned=False, note=note)


def pin(db: DB, pid: int | str, *, actor: str | None = None) -> PropRow:
    """Pin PID: it enters the pack whatever its evidence. Refused when the pinned propositions
    already fill the pack's CAP slots (every pin must fit, or one would silently be left out)."""
    def fits(con, p: PropRow) -> None:
        if p.pinned:
            raise KBError(f"{p.label} is already pinned")
        n = _live_pins(con)
        if n >= CAP:
            raise KBError(f"{n} pinned propositions already fill the pack of {CAP}; unpin one before pinning {p.label}")
    return _set_status(db, pid, "pin", "pinned {label}", actor, LIVE, check=fits, pinned=True)


def _live_pins(con) -> int:
    return con.execute("SELECT count(*) FROM kb_propositions WHERE pinned AND status IN ('active', 'proposed')"
                       ).fetchone()[0]


def unpin(db: DB, pid: int | str, *, actor: str | None = None) -> PropRow:
    p = get_proposition(db, pid)
    if not p.pinned:
        raise KBError(f"{p.label} is not pinned")
    return _set_status(db, pid, "unpin", "unpinned {label}", actor, LIVE, pinned=False)


def accept(db: DB, pid: int | str, *, actor: str | None = None) -> PropRow:
    """A proposed proposition becomes active (the curator vouches for it)."""
    return _set_status(db, pid, "accept", "accepted {label}", actor, ("proposed",), status="active")


def mark_distinct(db: DB, a: int | str, b: int | str, *, note: str | None = None, actor: str | None = None) -> None:
    """Say A and B are not duplicates: never suggested as a pair again, separate clusters in the pack."""
    a, b = sorted((parse_id(a), parse_id(b)))
    if a == b:
        raise KBError("a proposition is not distinct from itself")
    with transaction(db) as con:
        _prop(con, a)
        _prop(con, b)
        if con.execute("SELECT 1 FROM kb_distinct WHERE a = ? AND b = ?", [a, b]).fetchone():
            raise KBError(f"{label(a)} and {label(b)} are already marked distinct")
        before = {"props": {}, "distinct": _snap_distinct(con)}
        con.execute("INSERT INTO kb_distinct VALUES (?, ?, ?, ?)", [a, b, note, utcnow()])
        _audit(con, "distinct", [a, b], {"a": a, "b": b, "note": note},
               f"marked {label(a)} and {label(b)} distinct", before, actor)


def distinct_pairs(db: DB = None) -> list[tuple[int, int]]:
    with reading(db) as con:
        return [(int(a), int(b)) for a, b in con.execute("SELECT a, b FROM kb_distinct").fetchall()]


def _restore(con, snap: dict) -> list[str]:
    done = []
    for sid, row in snap.get("props", {}).items():
        pid = int(sid)
        if row is None:
            # created by the operation: withdrawn (its id stays resolvable in the log)
            if con.execute("SELECT 1 FROM kb_propositions WHERE id = ?", [pid]).fetchone():
                _update(con, pid, status="withdrawn", pinned=False)
                done.append(f"withdrew {label(pid)}")
            continue
        cols = {k: row.get(k) for k in _PROP_COLS if k not in ("id", "created_at", "updated_at")}
        _update(con, pid, **cols)
        _set_evidence(con, pid, [ev.EvidenceRow(*e) for e in row["evidence"]])
        done.append(f"restored {label(pid)}")
    if "distinct" in snap:
        con.execute("DELETE FROM kb_distinct")
        now = utcnow()
        for a, b, note in snap["distinct"]:
            con.execute("INSERT INTO kb_distinct VALUES (?, ?, ?, ?)", [a, b, note, now])
        done.append("restored the distinct pairs")
    return done


def newest_undoable_at(db: DB = None, *, actor: str | None = None):
    """When the acting curator's newest KB operation not undone yet was logged (None: none)."""
    who = _actor(actor)
    with transaction(db) as con:
        r = con.execute(
            "SELECT max(logged_at) FROM kb_audit a WHERE op IN (" + ", ".join("?" for _ in UNDOABLE) + ")"
            " AND actor = ? AND NOT EXISTS (SELECT 1 FROM kb_audit u WHERE u.undo_of = a.seq)",
            [*UNDOABLE, who]).fetchone()
    return None if r is None else r[0]


def undo(db: DB = None, *, actor: str | None = None) -> dict:
    """Revert the acting curator's own latest operation not yet undone (repeat to go further
    back); another curator's steps and the seed's are never undone by it. The undo is itself a
    row of the audit log. Returns {"undone": seq, "op", "summary"}."""
    who = _actor(actor)
    with transaction(db) as con:
        r = con.execute(
            "SELECT seq, op, summary, before, prop_ids FROM kb_audit a WHERE op IN ("
            + ", ".join("?" for _ in UNDOABLE) + ") AND actor = ?"
            " AND NOT EXISTS (SELECT 1 FROM kb_audit u WHERE u.undo_of = a.seq)"
            " ORDER BY seq DESC LIMIT 1", [*UNDOABLE, who]).fetchone()
        if r is None:
            raise KBError(f"nothing of {who}'s to undo")
        seq, op, summary, before_js, pids_js = r
        before = json.loads(before_js)
        pids = [int(p) for p in before.get("props", {})] or json.loads(pids_js or "[]")
        # a later step of someone else on the same propositions would be silently reverted too
        for lseq, lactor, lpids in con.execute(
                "SELECT seq, actor, prop_ids FROM kb_audit a WHERE seq > ? AND actor <> ? AND op <> 'undo'"
                " AND NOT EXISTS (SELECT 1 FROM kb_audit u WHERE u.undo_of = a.seq) ORDER BY seq",
                [seq, who]).fetchall():
            touched = set(json.loads(lpids or "[]")) & set(pids)
            if touched:
                raise KBError(f"#{seq} ({summary}) cannot be undone: {', '.join(label(t) for t in sorted(touched))} "
                              f"changed since, by {lactor} (#{lseq})")
        pre = _snapshot(con, pids, distinct="distinct" in before)
        pins_before = _live_pins(con)
        _restore(con, before)
        pins_after = _live_pins(con)
        if pins_after > max(CAP, pins_before):  # a pin it brings back must fit, as `pin` would require
            raise KBError(f"#{seq} ({summary}) cannot be undone: it would pin {pins_after} propositions, past the "
                          f"pack's {CAP}; unpin one first")
        after = _snapshot(con, pids, distinct="distinct" in before)
        con.execute(
            "INSERT INTO kb_audit (logged_at, actor, op, prop_ids, args, summary, before, after, undo_of)"
            " VALUES (?, ?, 'undo', ?, ?, ?, ?, ?, ?)",
            [utcnow(), who, json.dumps(pids), json.dumps({"seq": seq}), f"undid #{seq}: {summary}",
             json.dumps(pre, default=str), json.dumps(after, default=str), seq])
    return {"undone": int(seq), "op": op, "summary": summary}


# --------------------------------------------------------------------------- proposing

def mine(db: DB = None, *, actor: str | None = None, **kw) -> list[int]:
    """Run the rule miner on the training split; new structures enter as proposed."""
    views = question_views(db, split="train")
    found = mine_rules(views, **kw)
    with transaction(db) as con:
        live = {r[0] for r in con.execute("SELECT structure_key FROM kb_propositions WHERE status IN"
                                          " ('active', 'proposed')").fetchall()}
        allv = _views_by_id(con)
        ids = []
        from archcurator.core.kb.miner import render as render_mined

        for m in found:
            if m.structure.key in live:
                continue
            live.add(m.structure.key)
            h = m.heldout()
            pid = _insert_prop(con, text=render_mined(m), structure=m.structure, status="proposed",
                               origin="miner",
                               source=f"rule miner (train: {m.support} for, {m.contradict} against; held out over "
                                      f"families: {h['support']} for, {h['contradict']} against)",
                               heldout=h)
            _set_evidence(con, pid, _derive(con, m.structure, allv))
            ids.append(pid)
        if ids:
            _audit(con, "mine", ids, {k: v for k, v in kw.items()}, f"miner proposed {len(ids)} propositions",
                   {"props": {str(i): None for i in ids}}, actor)
    return ids


def import_proposals(db: DB, path: str | os.PathLike, *, actor: str | None = None
                     ) -> tuple[list[int], list[ProposalRejection]]:
    """An outside solver's proposals (JSONL). Returns (new ids, the rejected lines). Raises KBError
    naming the file when it cannot be read at all (nothing is written)."""
    from archcurator.core.kb.proposals import ProposalFileError, read_proposals

    try:
        props, bad = read_proposals(path)
    except ProposalFileError as e:
        raise KBFileError(path, str(e)) from None
    ids = []
    if props:
        with transaction(db) as con:
            allv = _views_by_id(con)
            for p in props:
                pid = _insert_prop(con, text=p.text, structure=p.structure, status="proposed", origin="import",
                                   source=p.source)
                _set_evidence(con, pid, _derive(con, p.structure, allv))
                ids.append(pid)
            _audit(con, "import-proposals", ids, {"path": str(path)},
                   f"imported {len(ids)} proposals from {Path(path).name}", {"props": {str(i): None for i in ids}},
                   actor)
    return ids, bad


# --------------------------------------------------------------------------- suggestions & pack

@dataclass
class Suggestions:
    duplicates: list[DuplicatePair]
    narrowing: list[NarrowSuggestion]

    def to_dict(self) -> dict:
        return {"duplicates": [d.to_dict() for d in self.duplicates],
                "narrowing": [n.to_dict() for n in self.narrowing]}


def suggestions(db: DB = None, *, narrowing_per_prop: int = 1) -> Suggestions:
    """Near-duplicate pairs (structure first, then text) and narrowing candidates, for live
    propositions. Nothing is applied."""
    props = list_propositions(db, "live")
    lites = [p.lite() for p in props]
    dist = distinct_pairs(db)
    dups = duplicate_pairs(lites, dist)
    with reading(db) as con:
        views = _views_by_id(con)
        train = [v for v in views.values() if v.split == "train"]
        vocab = scope_vocabulary(train)
        narrows: list[NarrowSuggestion] = []
        for p in props:
            if p.contradict == 0 or p.support == 0:
                continue
            narrows += narrowing(p.lite(), _get_rows(con, p.id), views, vocab, top=narrowing_per_prop)
    narrows.sort(key=lambda n: (-(n.contradict_before - n.contradict_after), n.prop_id))
    return Suggestions(dups, narrows)


def current_pack(db: DB = None) -> list[PackEntry]:
    props = [p.lite() for p in list_propositions(db, "live")]
    return build_pack(props, clusters(props, distinct_pairs(db)))


def pack_status(db: DB = None) -> dict[int, tuple[int | None, str]]:
    """Every proposition: (its rank in the pack, how it entered) or (None, why it is out)."""
    from archcurator.core.kb.pack import pack_status as status

    every = list_propositions(db, "all")
    lites = [p.lite() for p in every]
    live = [p for p in lites if p.status in LIVE]
    return status(lites, clusters(live, distinct_pairs(db)))


def _pack_content(entries: list[PackEntry], fmt: str) -> str:
    if fmt == "json":
        return canonical(pack_json(entries, exported_at=utcnow().isoformat(timespec="seconds")))
    if fmt == "text":
        return pack_text(entries)
    raise KBError(f"pack format is json or text, not {fmt!r}")


def show_pack(db: DB = None, fmt: str = "json") -> str:
    """The pack as JSON ({"propositions": [...]}) or text. Showing records nothing."""
    return _pack_content(current_pack(db), fmt)


def export_pack(db: DB = None, fmt: str = "json", *, destination: str | None = None,
                actor: str | None = None) -> tuple[str, int]:
    """The pack as JSON or text, recorded as an export (to DESTINATION when given)."""
    entries = current_pack(db)
    content = _pack_content(entries, fmt)
    with transaction(db) as con:
        eid = one(con.execute(
            "INSERT INTO kb_pack_exports (exported_at, actor, format, prop_ids, n, sha256, content, destination)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [utcnow(), _actor(actor), fmt, json.dumps([e.prop.id for e in entries]), len(entries),
             content_hash(content), content, destination]))[0]
    return content, int(eid)


def write_pack(db: DB, path: str | os.PathLike, fmt: str | None = None, *, actor: str | None = None) -> dict:
    """Write the pack to PATH (format from its suffix: .json, else text) and record the export.
    Returns {"path", "export", "count", "format"}; KBError (one line) when it cannot be written,
    and then nothing is recorded."""
    target = Path(os.path.expanduser(str(path))).resolve()
    fmt = fmt or ("json" if target.suffix.lower() == ".json" else "text")
    entries = current_pack(db)
    content = _pack_content(entries, fmt)
    if target.is_dir():
        raise KBError(f"{target}: a folder; give a file name (e.g. {target / 'pack.json'})")
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise KBError(f"{target}: cannot write ({e.strerror or e.__class__.__name__})") from None
    if mode is not None and not stat.S_ISREG(mode):
        # the pack is written beside the target and renamed over it: a device or a FIFO named here
        # would be replaced by a plain file, not written to
        raise KBError(f"{target}: not a regular file (a device, FIFO or socket); give a file name")
    try:
        # a fresh temporary name (never an existing file or link) beside the target, renamed over it
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(content)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise KBError(f"{target}: cannot write ({e.strerror or e.__class__.__name__})") from None
    with transaction(db) as con:
        eid = one(con.execute(
            "INSERT INTO kb_pack_exports (exported_at, actor, format, prop_ids, n, sha256, content, destination)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [utcnow(), _actor(actor), fmt, json.dumps([e.prop.id for e in entries]), len(entries),
             content_hash(content), content, str(target)]))[0]
    return {"path": str(target), "export": int(eid), "count": len(entries), "format": fmt}


def pack_exports(db: DB = None, limit: int = 20) -> list[dict]:
    with reading(db) as con:
        rows = con.execute("SELECT id, exported_at, actor, format, prop_ids, n, sha256, destination"
                           " FROM kb_pack_exports ORDER BY id DESC LIMIT ?", [limit]).fetchall()
    keys = ("id", "at", "actor", "format", "prop_ids", "n", "sha256", "destination")
    return [{**dict(zip(keys, r)), "at": str(r[1]), "prop_ids": json.loads(r[4])} for r in rows]


def replay_report(db: DB = None, *, split: str = "test", lofo: bool = True) -> dict:
    """The offline replay of the current pack on the held-out questions (SPLIT), with its
    baselines, per source and family, and leave one family out (SPEC §4)."""
    from archcurator.core.kb.replay import replay

    views = question_views(db)
    train = [v for v in views if v.split == "train"]
    return replay(views, current_pack(db), split=split, train=train, lofo=lofo)


# --------------------------------------------------------------------------- the shipped KB

def assets_dir() -> Path:
    from archcurator.core.assets import ASSETS

    return ASSETS / "aiq"


def shipped_questions() -> list[dict]:
    f = assets_dir() / "questions.jsonl"
    if not f.is_file():
        return []
    return [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_kb_seeded(db: DB = None) -> bool:
    with reading(db) as con:
        return con.execute("SELECT 1 FROM store_meta WHERE key = ?", [SEEDED_KEY]).fetchone() is not None


def seed_kb(db: DB = None, *, force: bool = False, actor: str = "seed") -> dict:
    """The demo knowledge base: the shipped questions, the miner's proposals on their training
    split, the demo solver's proposals (near-duplicates and over-broad statements among them)
    and a few curator propositions. Seeds once (recorded in store_meta) unless FORCE."""
    if not force and is_kb_seeded(db):
        return {"seeded": False}
    qs = shipped_questions()
    summary = import_questions(db, qs, source="assets/aiq/questions.jsonl", origin="shipped")
    curated = []
    for text, scope, claim in DEMO_CURATED:
        curated.append(add(db, text, scope, claim, status="active", origin="seed", source="demo curator",
                           actor=actor))
    mined = mine(db, actor=actor)
    imported: list[int] = []
    demo = assets_dir() / "demo_proposals.jsonl"
    if demo.is_file():
        imported, _ = import_proposals(db, demo, actor=actor)
    with transaction(db) as con:
        con.execute("INSERT OR REPLACE INTO store_meta VALUES (?, ?)", [SEEDED_KEY, utcnow().isoformat()])
    return {"seeded": True, "questions": len(summary.imported), "curated": curated, "mined": mined,
            "imported": imported}


def ensure_kb(db: DB = None) -> dict | None:
    """Seed the demo knowledge base on a store that has none (no questions, never seeded)."""
    with reading(db) as con:
        seeded = con.execute("SELECT 1 FROM store_meta WHERE key = ?", [SEEDED_KEY]).fetchone()
        n = one(con.execute("SELECT count(*) FROM aiq_questions"))[0]
    if seeded or n:
        return None
    return seed_kb(db)


# A curator's first statements: two broad ones (the narrowing suggestions have work to do)
# and one the evidence should favour.
DEMO_CURATED: list[tuple[str, list[str], str]] = [
    ("Adam wins.", [], "optimizer == adam wins"),
    ("The highest learning rate wins.", [], "higher lr wins"),
    ("With a small budget, plain SGD without momentum loses.", ["budget < 4096"],
     "optimizer == sgd & momentum == 0 loses"),
]
