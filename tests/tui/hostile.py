"""A store whose every text field is markup and terminal escape sequences (issue 12: terminal injection).

Written with the store's own bulk insert and record functions, not the importer: a store may hold
what an older importer let through, or what another tool wrote. Every record kind is covered:
designs (id, name, author's model, task set, run, parent, reference, source, batch fields, graph
name, node and input ids, arguments, meta, train), findings (key, rule, nodes, message), judgments
(curator, note), flags, adjudications, missed defects (rule, description), runs (device, backend,
exception, message, log, failed node), and knowledge-base propositions and their audit log.
"""

from __future__ import annotations

import json
from pathlib import Path

# what a hostile batch writes into a field: markup that closes what was never opened, a title change,
# an OSC 52 clipboard write, a screen clear, a carriage return, a one-byte CSI, a click action,
# a bidi override
EVIL = ("[/bold][/][bold red]x[/]\x1b]0;pwned-title\x07\x1b]52;c;aGVsbG8=\x07\x1b[2J\r\x9b31m"
        "[@click=app.quit]q[/]\u202e")


def evil(tag: str) -> str:
    return f"{tag}{EVIL}"


DESIGN = evil("d-")
CLEAN = evil("c-")
UNGEN = evil("u-")
CURATOR = evil("ann")
OTHER = evil("bob")


def _graph(ids: dict) -> dict:
    """tiny_cnn-like chain with hostile ids (the fc reads the wrong width: a real block finding)."""
    x, c1, r1, fl, fc = ids["x"], ids["conv"], ids["relu"], ids["flat"], ids["fc"]
    return {
        "format": "archgraph/1", "name": evil("graph"),
        "inputs": [{"id": x, "shape": ["B", 3, 8, 8], "dtype": "float32"}],
        "nodes": [
            {"id": c1, "op": "Conv2d", "args": {"in_channels": 3, "out_channels": 4, "kernel_size": 3,
                                                "padding": 1}, "in": [x]},
            {"id": r1, "op": "ReLU", "in": [c1]},
            {"id": fl, "op": "Flatten", "in": [r1]},
            {"id": fc, "op": "Linear", "args": {"in_features": 77, "out_features": 10}, "in": [fl]},
        ],
        "outputs": [fc],
        "meta": {evil("k"): evil("v"), "corruption": {"expect": "block"}},
        "train": {"loss": evil("loss"), "batch_size": 8},
    }


NODE_IDS = {"x": evil("x"), "conv": evil("conv"), "relu": evil("relu"), "flat": evil("flat"), "fc": evil("fc")}


def make_hostile_store(path: Path) -> Path:
    from archcurator.store import judgments as J
    from archcurator.store import kb as K
    from archcurator.store.connection import transaction, utcnow
    from archcurator.store.designs import insert_designs
    from archcurator.store.missed import record_missed_defect
    from archcurator.store.runs import record_run

    now = utcnow()
    graph = _graph(NODE_IDS)
    cost = {"params": 1234, "flops_per_sample": 5e6, "quote": {"usd": 0.5, "device": evil("gpu"), "hours": 1.0,
                                                                "price_per_hour": 1.0, "peak_tflops": 70.0,
                                                                "utilisation": 0.35},
            "memory": {evil("mem"): 1024}, "assumptions": [evil("assume")]}
    common = {"author": "agent", "model": evil("model"), "task_set": evil("task"), "run": evil("run"),
              "source": evil("src"), "extra": json.dumps({evil("field"): evil("value"), "expect": "block"}),
              "imported_at": now, "verifier_version": evil("v")}
    rows = [
        {"id": DESIGN, "name": evil("name"), "parent": CLEAN, "reference": evil("ref"), "graph": json.dumps(graph),
         "verdict": "block", "n_nodes": 4, "n_block": 1, "n_warn": 1, "params": 1234, "flops": 5e6,
         "quoted_cost_usd": 0.5, "quote_device": evil("gpu"), "cost_a10g_usd": 0.5, "cost": json.dumps(cost),
         **common},
        {"id": CLEAN, "name": evil("clean"), "graph": json.dumps(_graph({k: v + "2" for k, v in NODE_IDS.items()})),
         "verdict": "pass", "n_nodes": 4, "n_block": 0, "n_warn": 0, "params": 1234, "flops": 5e6,
         "cost": json.dumps(cost), **common},
        {"id": UNGEN, "name": evil("ungen"), "error": evil("could not generate: "), "graph": None, "verdict": None,
         "n_block": 0, "n_warn": 0,
         **common},
    ]
    finds = [
        {"design_id": DESIGN, "key": evil("shape.x@"), "rule": evil("shape.x"), "severity": "block",
         "nodes": NODE_IDS["fc"], "node_list": [NODE_IDS["fc"]], "message": evil("message "), "stale": False,
         "first_seen": now, "last_seen": now},
        {"design_id": DESIGN, "key": evil("warn.y@"), "rule": evil("warn.y"), "severity": "warn",
         "nodes": NODE_IDS["conv"], "node_list": [NODE_IDS["conv"]], "message": evil("warn "), "stale": False,
         "first_seen": now, "last_seen": now},
    ]
    insert_designs(path, rows, finds)
    key = finds[0]["key"]
    J.record_judgment(path, DESIGN, key, CURATOR, "real", evil("note "))
    J.record_judgment(path, DESIGN, key, OTHER, "false_alarm", evil("other note "))
    J.set_flag(path, DESIGN, finds[1]["key"], CURATOR, True, evil("flag "))
    J.adjudicate(path, DESIGN, key, OTHER, "unsure", evil("why "))
    record_missed_defect(path, DESIGN, CURATOR, [NODE_IDS["relu"]], rule="other: " + EVIL, description=evil("desc "))
    record_missed_defect(path, CLEAN, OTHER, [], description=evil("seen "))
    for status in ("failed", "ok"):
        record_run(path, kind="forward", design_id=DESIGN, backend=evil("local"), device=evil("cpu"), status=status,
                   started_at=now, ended_at=now, seconds=1.5, exception=evil("RuntimeError") if status == "failed"
                   else None, message=evil("boom "), log_tail=evil("log\nline two "),
                   metrics={"failed_node": NODE_IDS["fc"], "loss_curve": [3.0, 2.0, 1.0]},
                   spec={"device": evil("dev")})
    record_run(path, kind="train", design_id=CLEAN, device=evil("cpu"), status="ok", started_at=now, ended_at=now,
               seconds=2.0, message=evil("trained "), metrics={"loss_first": 2.0, "loss_last": 1.0,
                                                              "loss_curve": [2.0, 1.5, 1.0]})
    # the KB refuses control characters in a proposition's words at its door (store.kb), so the hostile
    # words are written under it, as a store from before that door (or edited by hand) would hold them
    a = K.add(path, "Adam wins", [], "optimizer == adam wins", actor=CURATOR)
    b = K.add(path, "Adam beats all", [], "optimizer == adam wins", actor=OTHER)
    with transaction(path) as con:
        for pid, words in ((a, evil("Adam wins ")), (b, evil("Adam beats all "))):
            con.execute("UPDATE kb_propositions SET text = ? WHERE id = ?", [words, pid])
        con.execute("INSERT INTO store_meta VALUES (?, ?)", [evil("meta"), evil("value")])
    return path
