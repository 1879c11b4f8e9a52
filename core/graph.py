"""The Design type: one archgraph/1 design, loaded, validated and saved.

Structural faults that a person must fix before anything can be read
(malformed JSON, missing fields, duplicate ids) raise `DesignError`, a
one-line message naming the file and the node. Faults of the graph itself
(dangling references, cycles, unknown ops) are the verifier's findings, so
`Design` keeps them and `structural_problems()` lists them.
"""

from __future__ import annotations

import gc
import json
import math
import re
from itertools import chain
from pathlib import Path

from . import jsontext
from .ops.base import DTYPE_NAMES, canonical_dtype
from .valueclass import field, value_class

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the start-up of verify --json)
if TYPE_CHECKING:
    from typing import Any

FORMAT = "archgraph/1"
# matched whole (`fullmatch`): with `match` and `$`, an id "fc\n" passed
ID_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,512}")
# torch keeps sizes and counts as int64: anything larger cannot be a tensor's size
INT64_MAX = 2 ** 63 - 1
_NODE_KEYS = ("id", "op", "args", "in", "shares")
DTYPES = frozenset(DTYPE_NAMES)  # torch's names of the dtypes the op table models (`half` is float16)
_TOP_KEYS = ("format", "name", "inputs", "nodes", "outputs", "train", "meta")


class DesignError(ValueError):
    """A design that cannot be read at all; the message is one line."""


def parse_ref(ref: str) -> tuple[str, int]:
    """`id:N` -> (id, N); a bare id is result 0."""
    if ":" not in ref:  # the common case, on the verifier's hot path
        return ref, 0
    head, sep, tail = ref.rpartition(":")
    if sep and tail.isdigit() and head:
        return head, int(tail)
    return ref, 0


@value_class
class InputSpec:
    id: str
    shape: list
    dtype: str = "float32"
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "shape": list(self.shape)}
        if self._had_dtype:
            d["dtype"] = self.dtype
        d.update(self.extra)
        return d

    _had_dtype: bool = True


@value_class
class Node:
    id: str
    op: str
    args: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    shares: str | None = None
    extra: dict = field(default_factory=dict)
    # which optional keys the source carried, so saving gives the same JSON back
    _present: tuple = ("args", "in")

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"id": self.id, "op": self.op}
        if "args" in self._present or self.args:
            d["args"] = self.args
        if "in" in self._present or self.inputs:
            d["in"] = list(self.inputs)
        if self.shares is not None:
            d["shares"] = self.shares
        d.update(self.extra)
        return d


@value_class
class Problem:
    """A structural fault of the graph, reported by the verifier as a finding."""

    kind: str  # dangling | cycle | no-output | dangling-output | bad-shares
    nodes: list
    message: str


@value_class
class Design:
    name: str
    inputs: list[InputSpec]
    nodes: list[Node]
    outputs: list[str]
    train: dict | None = None
    meta: dict | None = None
    extra: dict = field(default_factory=dict)
    source: str | None = None
    _key_order: tuple = _TOP_KEYS

    # ---- construction -------------------------------------------------
    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> Design:
        where = source or "<design>"
        if not isinstance(data, dict):
            raise DesignError(f"{where}: a design must be a JSON object, got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != FORMAT:
            raise DesignError(f"{where}: format must be {FORMAT!r}, got {fmt!r}")
        for key in ("inputs", "nodes", "outputs"):
            if key not in data:
                raise DesignError(f"{where}: missing field {key!r}")
            if not isinstance(data[key], list):
                raise DesignError(f"{where}: field {key!r} must be a list")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise DesignError(f"{where}: field 'name' must be a string")
        seen: set[str] = set()
        inputs: list[InputSpec] = []
        for i, raw in enumerate(data["inputs"]):
            if not isinstance(raw, dict) or "id" not in raw or "shape" not in raw:
                raise DesignError(f"{where}: input #{i} needs 'id' and 'shape'")
            iid = raw["id"]
            _check_id(iid, where, f"input #{i}")
            if iid in seen:
                raise DesignError(f"{where}: input {iid!r}: duplicate id")
            seen.add(iid)
            shape = raw["shape"]
            if not isinstance(shape, list) or not all(_is_dim(s) for s in shape) or len(shape) > MAX_RANK \
                    or sum(len(s) for s in shape if isinstance(s, str)) > MAX_SIZE_TEXT:
                raise DesignError(
                    f"{where}: input {iid!r}: shape must be a list of at most {MAX_RANK} sizes >= 0 (at most "
                    "2**63-1), symbols (names such as \"B\", 4096 characters in all) or null"
                )
            spec = InputSpec(
                id=iid,
                shape=list(shape),
                dtype=raw.get("dtype", "float32"),
                extra={k: v for k, v in raw.items() if k not in ("id", "shape", "dtype")},
            )
            spec._had_dtype = "dtype" in raw
            if type(spec.dtype) is not str or spec.dtype not in DTYPES:
                raise DesignError(f"{where}: input {iid!r}: dtype {_shown(spec.dtype)} is not one of "
                                  f"{', '.join(sorted(DTYPES))}")
            spec.dtype = canonical_dtype(spec.dtype)  # one name per dtype from here on: `half` is float16
            if "vocab_size" in spec.extra and not _is_count(spec.extra["vocab_size"]):
                raise DesignError(f"{where}: input {iid!r}: vocab_size must be an integer from 1 to 2**63-1, "
                                  f"got {_shown(spec.extra['vocab_size'])}")
            inputs.append(spec)
        nodes: list[Node] = []
        id_ok = ID_PATTERN.fullmatch
        for i, raw in enumerate(data["nodes"]):
            # the common case is checked inline: this loop runs once per node of every imported design
            if type(raw) is not dict:
                raise DesignError(f"{where}: node #{i} must be an object")
            nid = raw.get("id")
            if nid is None:
                raise DesignError(f"{where}: node #{i}: missing field 'id'")
            if type(nid) is not str or not id_ok(nid):
                _check_id(nid, where, f"node #{i}")
            if nid in seen:
                raise DesignError(f"{where}: node {nid!r}: duplicate id")
            seen.add(nid)
            op = raw.get("op")
            if type(op) is not str or not op:
                raise DesignError(f"{where}: node {nid!r}: missing field 'op'")
            args = raw.get("args")
            if args is None:
                args = {}
            elif type(args) is not dict:
                raise DesignError(f"{where}: node {nid!r}: 'args' must be an object")
            ins = raw.get("in")
            if ins is None:
                ins = []
            elif type(ins) is not list or (ins and (type(ins[0]) is not str or
                                                    (len(ins) > 1 and any(type(r) is not str for r in ins)))):
                if type(ins) is list and any(r is None for r in ins):
                    # a skipped optional operand (torch's None) has no place in archgraph/1's operand list
                    raise DesignError(f"{where}: node {nid!r}: 'in' must be a list of ids, and null is not one: "
                                      "operands are positional, so to give a later optional one (a key padding "
                                      "mask, a tgt_mask) give every one before it")
                raise DesignError(f"{where}: node {nid!r}: 'in' must be a list of ids")
            shares = raw.get("shares")
            if shares is not None and type(shares) is not str:
                raise DesignError(f"{where}: node {nid!r}: 'shares' must be a node id")
            has_args, has_in = "args" in raw, "in" in raw
            known = 2 + has_args + has_in + ("shares" in raw)
            nodes.append(Node(
                nid, op, args, list(ins), shares,
                {k: v for k, v in raw.items() if k not in _NODE_KEYS} if len(raw) > known else {},
                ("args", "in") if has_args and has_in else ("args",) if has_args else ("in",) if has_in else (),
            ))
        outputs = data["outputs"]
        if not all(isinstance(o, str) for o in outputs):
            raise DesignError(f"{where}: 'outputs' must be a list of ids")
        for key in ("train", "meta"):
            if data.get(key) is not None and not isinstance(data[key], dict):
                raise DesignError(f"{where}: field {key!r} must be an object")
        if data.get("train"):
            problem = train_problem(data["train"])
            if problem:
                raise DesignError(f"{where}: {problem}")
        return cls(
            name=name,
            inputs=inputs,
            nodes=nodes,
            outputs=list(outputs),
            train=data.get("train"),
            meta=data.get("meta"),
            extra={k: v for k, v in data.items() if k not in _TOP_KEYS},
            source=source,
            _key_order=tuple(data.keys()),
        )

    @classmethod
    def from_json(cls, text: str, source: str | None = None) -> Design:
        where = source or "<design>"
        # reading makes many small objects and frees none: the cyclic collector's passes over them made
        # loading a large design cost several times what the parse does
        paused = gc.isenabled()
        gc.disable()
        try:
            try:
                data = jsontext.loads(text)
            except json.JSONDecodeError as exc:
                raise DesignError(
                    f"{where}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
                ) from None
            return cls.from_dict(data, source=source)
        finally:
            if paused:
                gc.enable()

    @classmethod
    def load(cls, path: str | Path) -> Design:
        if str(path) == "":  # Path("") is ".", the working folder: "is a folder" would name neither
            raise DesignError("'': an empty name, not a file to read")
        path = Path(path)
        try:
            text = jsontext.read_file(path)
        except (OSError, UnicodeDecodeError, jsontext.FileRefused) as exc:
            raise DesignError(f"{path}: {jsontext.read_problem(exc)}") from None
        return cls.from_json(text, source=str(path))

    # ---- saving --------------------------------------------------------
    def to_dict(self) -> dict:
        body: dict[str, Any] = {
            "format": FORMAT,
            "name": self.name,
            "inputs": [i.to_dict() for i in self.inputs],
            "nodes": [n.to_dict() for n in self.nodes],
            "outputs": list(self.outputs),
        }
        if self.train is not None:
            body["train"] = self.train
        if self.meta is not None:
            body["meta"] = self.meta
        body.update(self.extra)
        order = [k for k in self._key_order if k in body]
        order += [k for k in body if k not in order]
        return {k: body[k] for k in order}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    # ---- structure -----------------------------------------------------
    @property
    def input_ids(self) -> list[str]:
        return [i.id for i in self.inputs]

    def node_map(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def sequence_symbols(self) -> set:
        """The symbols train.seq_len sizes: every one first met at dim 1 of an input (batch first:
        [B, T, ...], a decoder's [B, S, E] and [B, T, E]); when no input has a symbol there, the first
        one past dim 0 ([B, C, T] for a 1-D convolution's sequence). A symbol first met at dim 0 is the
        batch's, whatever else it is."""
        first: dict = {}
        for spec in self.inputs:
            for i, d in enumerate(spec.shape):
                if isinstance(d, str) and d not in first:
                    first[d] = i
        at_one = {d for d, i in first.items() if i == 1}
        if at_one:
            return at_one
        later = [d for d, i in first.items() if i >= 2]
        return {later[0]} if later else set()

    def structural_problems(self, stuck: list | None = None, nodes: dict | None = None,
                            operands: dict | None = None) -> list[Problem]:
        """Dangling references, bad `shares`, cycles, missing outputs. `nodes`, `operands`: the caller's
        wiring of the same design, when it has one."""
        problems: list[Problem] = []
        nodes = self.node_map() if nodes is None else nodes
        known = set(self.input_ids) | nodes.keys()
        # with the wiring, one set operation says whether any reference dangles; without a dangling one
        # only the (rare) shared nodes need a look
        sound = operands is not None and known.issuperset(chain.from_iterable(operands.values()))
        for n in self.nodes:
            if sound and n.shares is None:
                continue
            for ref in n.inputs:
                rid = ref if ":" not in ref else parse_ref(ref)[0]
                if rid not in known:
                    problems.append(
                        Problem("dangling", [n.id], f"node {n.id!r} reads {ref!r}, which no input or node defines")
                    )
            if n.shares is not None and n.shares not in nodes:
                problems.append(
                    Problem("bad-shares", [n.id],
                            f"node {n.id!r} shares weights with {n.shares!r}, which is not a node")
                )
        if not self.outputs:
            problems.append(Problem("no-output", [], "the design declares no outputs"))
        for o in self.outputs:
            oid, _ = parse_ref(o)
            if oid not in known:
                problems.append(Problem("dangling-output", [], f"output {o!r} names no input or node"))
        for cyc in find_cycles(self, stuck):
            problems.append(Problem("cycle", cyc, cycle_words(cyc)))
        return problems

    def topo_order(self) -> list[Node]:
        """Nodes in dependency order; nodes on a cycle come last, in file order."""
        order, _ = _kahn(self)
        return order


def wiring(design: Design) -> tuple[dict, dict, dict]:
    """(nodes by id, operands: node id -> producer ids in order, users: id -> consumer node ids).

    Result indices are dropped; a consumer is listed once per producer."""
    nodes = design.node_map()
    operands: dict[str, list[str]] = {}
    users: dict[str, list[str]] = {}
    for n in design.nodes:
        ins, nid = n.inputs, n.id
        if len(ins) == 1:  # most nodes read one operand: no list comprehension, no de-duplication
            rid = ins[0]
            if ":" in rid:
                rid = parse_ref(rid)[0]
            operands[nid] = [rid]
            lst = users.get(rid)
            if lst is None:
                users[rid] = [nid]
            else:
                lst.append(nid)
            continue
        ids = [r if ":" not in r else parse_ref(r)[0] for r in ins]
        operands[nid] = ids
        for rid in (dict.fromkeys(ids) if len(ids) > 1 else ids):
            lst = users.get(rid)
            if lst is None:
                users[rid] = [nid]
            else:
                lst.append(nid)
    return nodes, operands, users


def _kahn(design: Design, wired: tuple | None = None) -> tuple[list[Node], list[Node]]:
    nodes, operands, users = wired or wiring(design)
    indeg = {}
    ready = []
    for n in design.nodes:
        ops = operands[n.id]
        if len(ops) == 1:
            k = 1 if ops[0] in nodes else 0
        else:
            k = len({d for d in ops if d in nodes}) if ops else 0  # each producer once
        indeg[n.id] = k
        if k == 0:
            ready.append(n.id)
    get, push = users.get, ready.append
    for nid in ready:  # the list grows as the walk frees nodes: iterating it visits them in that order
        us = get(nid)
        if us:
            for u in us:
                k = indeg[u] - 1
                indeg[u] = k
                if not k:
                    push(u)
    order: list[Node] = [nodes[nid] for nid in ready]
    if len(order) == len(nodes):
        return order, []
    done = {n.id for n in order}
    stuck = [n for n in design.nodes if n.id not in done]
    return order + stuck, stuck


CYCLE_WORDS_NODES = 12


def cycle_words(cycle: list[str]) -> str:
    """`cycle: a -> b -> a`; a long cycle names its first and last nodes and how many lie between
    (its finding's node list keeps them all): 30,000 names made one message of 290 KB, which the
    text report then wrapped for a minute."""
    if len(cycle) <= CYCLE_WORDS_NODES:
        return "cycle: " + " -> ".join(cycle + [cycle[0]])
    head, tail = cycle[:CYCLE_WORDS_NODES - 3], cycle[-2:]
    between = len(cycle) - len(head) - len(tail)
    return (f"cycle of {len(cycle):,} nodes: " + " -> ".join(head) + f" -> … {between:,} more … -> "
            + " -> ".join(tail + [cycle[0]]))


def find_cycles(design: Design, stuck: list | None = None) -> list[list[str]]:
    """One representative cycle per strongly connected component of the stuck nodes.

    Linear in the stuck nodes and their edges: one pass of Tarjan's algorithm finds the
    components, then one walk per component names its cycle (a search per component over the
    whole graph was quadratic: 16,000 self-loops took 22 s). The cycle named is the one
    `networkx.find_cycle` names from the component's first node in file order, so finding keys
    stay what they were."""
    if stuck is None:  # the nodes Kahn's walk could not order; a caller that walked already passes them
        _, stuck = _kahn(design)
    if not stuck:
        return []
    # successors within the stuck nodes: consumers in file order, each once
    succ: dict[str, list[str]] = {n.id: [] for n in stuck}
    for n in stuck:
        for r in n.inputs:
            rid = r if ":" not in r else parse_ref(r)[0]
            out = succ.get(rid)
            if out is not None and (not out or out[-1] != n.id):
                out.append(n.id)
    order = {n.id: i for i, n in enumerate(stuck)}
    cycles = []
    for comp in _strong_components(succ):
        if len(comp) == 1:
            first = next(iter(comp))
            if first in succ[first]:
                cycles.append([first])  # a self-loop
            continue
        cycles.append(_first_cycle(min(comp, key=order.__getitem__), succ, comp))
    cycles.sort(key=lambda c: order[min(c, key=order.__getitem__)])
    return cycles


def _strong_components(succ: dict[str, list[str]]) -> list[set]:
    """Tarjan's strongly connected components, iterative (no recursion limit on long chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set = set()
    stack: list[str] = []
    comps: list[set] = []
    counter = 0
    for root in succ:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                    advanced = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                comps.append(comp)
    return comps


def _first_cycle(first: str, succ: dict[str, list[str]], comp: set) -> list[str]:
    """The cycle `networkx.find_cycle(component, source=first)` reports: an edge-by-edge depth-first
    walk that keeps the active path and stops at the first edge back onto it."""
    iters: dict = {}
    walk = [first]
    path: list[tuple[str, str]] = []
    active = {first}
    previous_head = None
    while walk:
        cur = walk[-1]
        it = iters.get(cur)
        if it is None:
            it = iters[cur] = iter([w for w in succ[cur] if w in comp])
        head = next(it, None)
        if head is None:
            walk.pop()
            continue
        walk.append(head)
        tail = cur
        if previous_head is not None and tail != previous_head:
            # backtracked: drop path edges until the path ends where this edge starts
            while True:
                if not path:
                    active = {tail}
                    break
                active.discard(path.pop()[1])
                if path and path[-1][1] == tail:
                    break
        path.append((tail, head))
        if head in active:
            start = next(i for i, (t, _) in enumerate(path) if t == head)
            return [t for t, _ in path[start:]]
        active.add(head)
        previous_head = head
    raise AssertionError("a strongly connected component without a cycle")


def _check_id(value: Any, where: str, label: str) -> None:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise DesignError(
            f"{where}: {label}: id {_shown(value)} must use letters, digits, '_', '-' and '.' "
            "(at most 512 of them)"
        )


def _shown(value: Any, limit: int = 60) -> str:
    """A value in an error line: its repr, cut short (a hostile value may be megabytes long)."""
    if isinstance(value, (str, bytes, list, dict, tuple)) and len(value) > limit:
        text = repr(value[:limit] if not isinstance(value, dict) else dict(list(value.items())[:3]))
        return text[:limit] + "…"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


MAX_SYMBOL = 100  # characters in a symbolic size's name
# what the verifier follows (core.shapes.MAX_RANK, MAX_SIZE_TEXT): an input past it is refused here
MAX_RANK = 1024
MAX_SIZE_TEXT = 4096


def _is_dim(value: Any) -> bool:
    # a symbol is a name ("B", "seq_len"): the size arithmetic reads symbols as expressions,
    # so anything else ("9**9**9", a NUL) must not reach it
    if value is None:
        return True
    if isinstance(value, str):
        return 0 < len(value) <= MAX_SYMBOL and value.isidentifier()
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= INT64_MAX


def _is_count(value: Any, low: int = 1) -> bool:
    return type(value) is int and low <= value <= INT64_MAX


def _is_amount(value: Any, low: float = 0.0, high: float | None = None, open_low: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        v = float(value)
    except OverflowError:
        return False
    return math.isfinite(v) and (v > low if open_low else v >= low) and (high is None or v <= high)


# The train block's fields (SPEC §1, README "Cost defaults"): what each must hold. Other fields are
# kept as written; these feed the cost quote and the checks, so a wrong type there would travel far
# (a batch_size "x" made the quote repeat a string to gigabytes).
_TRAIN_FIELDS = {
    "loss": (lambda v: isinstance(v, str), "a string (e.g. \"cross_entropy\")"),
    "steps": (_is_count, "an integer from 1 to 2**63-1"),
    "batch_size": (_is_count, "an integer from 1 to 2**63-1"),
    "seq_len": (_is_count, "an integer from 1 to 2**63-1"),
    "vocab_size": (_is_count, "an integer from 1 to 2**63-1"),
    "device": (lambda v: isinstance(v, str), "a GPU name of the price table (a string)"),
    "optimizer": (lambda v: isinstance(v, str), "a string (e.g. \"adam\")"),
    "budget_usd": (_is_amount, "a finite number >= 0"),
    "utilisation": (lambda v: _is_amount(v, 0.0, 1.0, open_low=True), "a number above 0 and at most 1"),
    "baseline": (lambda v: isinstance(v, dict) and all(_is_amount(v[k]) for k in ("params", "flops") if k in v
                                                        and v[k] is not None),
                 "an object whose params and flops are finite numbers >= 0"),
}


def train_problem(train: dict) -> str | None:
    """Why a `train` block cannot be used (one line), or None."""
    for name, (ok, want) in _TRAIN_FIELDS.items():
        if name in train and train[name] is not None and not ok(train[name]):
            return f"train.{name} must be {want}, got {_shown(train[name])}"
    return None


