"""The cost of a design: parameters, FLOPs, memory, and a dollar quote for one run.

Every figure that rests on an assumption says which one in `assumptions`,
so a quote can be read without this file open.
"""

from __future__ import annotations

import math
import sys

from . import dims as D
from .assets import gpu_prices
from .graph import Design
from .ops.base import dtype_bytes
from .sizes import quote_env

# Documented defaults for a design whose `train` block leaves a field out (README: "Cost defaults").
DEFAULTS = {
    "steps": 1000,
    "batch_size": 32,
    "seq_len": 128,
    "optimizer": "adam",
    "bytes_per_value": 4,  # a learned value's (float32, torch's default); activations count at their dtype's
    "other_symbol": 8,
}
OPTIMIZER_STATES = {"adam": 2, "adamw": 2, "sgd": 1, "rmsprop": 1, "adagrad": 1, "sgd-nomomentum": 0}
# forward + backward ~ 3x forward (backward computes grads w.r.t. inputs and weights)
TRAIN_FLOPS_FACTOR = 3
# A node's FLOPs or a tensor's values beyond this are no figure a quote can use (torch counts in
# int64); they are left out and said so, which also keeps every number printable (Python refuses
# to print an int of more than 4,300 digits)
LARGEST = 2 ** 63 - 1


def _count(v) -> bool:
    return type(v) is int and 0 < v <= LARGEST


def _finite(x: float, notes: list, what: str) -> float:
    """A float figure of the quote, kept finite so that the JSON answer holds no NaN or Infinity."""
    if math.isfinite(x):
        return x
    notes.append(f"{what} overflowed a float; shown as the largest float")
    return sys.float_info.max


def cost_env(design: Design, batch: int = 1) -> tuple[dict, list[str]]:
    """Sizes for the symbols of a quote (core/sizes.py: the design's declared sizes, in one place)."""
    return quote_env(design, batch, DEFAULTS["seq_len"], DEFAULTS["other_symbol"])


def _input_batch(design: Design) -> int:
    """The batch a parsed design's concrete inputs were given at (`meta.input_batch`, dim 0 of every
    input), or 1: the graph then computes that many samples at once."""
    b = (design.meta or {}).get("input_batch")
    if not _count(b) or not design.inputs:
        return 1
    if all(spec.shape and spec.shape[0] == b for spec in design.inputs):
        return b
    return 1


def compute_cost(design: Design, inf) -> dict:
    train = design.train or {}
    prices = gpu_prices()
    assumptions: list[str] = []
    params = sum(inf.params.values())
    env, notes = cost_env(design, 1)
    assumptions += notes
    flops: int | None = 0
    unknown_nodes = []
    refused_nodes = []
    resolved: dict = {}  # symbolic FLOP expression -> its value (repeated layers repeat them)
    flops_of, ok = inf.flops, inf.ok
    for node in design.nodes:
        f = flops_of.get(node.id, flops_of)
        if f is flops_of:  # no figure: a refused node counts 0 (it is blocked anyway), a sound one is unknown
            if node.id not in ok:
                refused_nodes.append(node.id)
                continue
            f = None
        if type(f) is int:  # nearly every count: an int FLOP figure needs no look-up
            if 0 <= f <= LARGEST:
                flops += f
            else:
                unknown_nodes.append(node.id)
            continue
        if f is None or D.is_const(f):
            v = f
        else:
            v = resolved.get(f)
            if v is None:
                v = resolved[f] = _value(f, env)
        if v is None or not D.is_const(v) or not 0 <= v <= LARGEST:
            unknown_nodes.append(node.id)
            continue
        flops += v
    if unknown_nodes:
        assumptions.append(f"FLOPs of {len(unknown_nodes)} node(s) unknown and left out "
                           f"(first: {unknown_nodes[0]})")
    if refused_nodes:
        # a triage asks what one run would have cost: the quote must say it is short of the refused layers
        assumptions.append(f"FLOPs of {len(refused_nodes)} refused node(s) not counted "
                           f"(first: {refused_nodes[0]})")
    # values by dtype, each counted at its dtype's size (int64 8, float16 2); float32, most of them, apart
    act_values: dict = {}
    act_float32 = 0
    sizes: dict = {}  # shape -> its number of values (most nodes share a few shapes)
    types = inf.types
    for node in design.nodes:
        for t in types.get(node.id, ()):
            if t.shape is None:
                continue
            # a long shape is known by identity: hashing it again for each node would cost its rank
            key = t.shape if len(t.shape) <= 64 else id(t.shape)
            n = sizes.get(key, sizes)
            if n is sizes:
                n = _numel(t.shape, env)
                sizes[key] = n = n if D.is_const(n) and 0 <= n <= LARGEST else None
            if n is not None:
                if t.dtype == "float32":
                    act_float32 += n
                else:
                    act_values[t.dtype] = act_values.get(t.dtype, 0) + n
    act_bytes = act_float32 * dtype_bytes("float32") + sum(n * dtype_bytes(d) for d, n in act_values.items())

    def field(name):
        v = train.get(name)
        if v is None:
            assumptions.append(f"{name}={DEFAULTS[name]} (default)")
            return DEFAULTS[name]
        if not _count(v):  # Design.from_dict refuses these; a design built in code may still hold one
            assumptions.append(f"{name}={DEFAULTS[name]} (default; {str(v)[:40]!r} is not a count)")
            return DEFAULTS[name]
        return v

    per = _input_batch(design)
    if per > 1:  # a parsed design's inputs hold the batch they were given: the figures are per sample
        flops = flops // per if flops is not None else None
        act_bytes //= per
        assumptions.append(f"inputs given at batch {per}: FLOPs and activations divided by it (per sample)")
    steps = field("steps")
    batch = field("batch_size")
    optimizer = train.get("optimizer", DEFAULTS["optimizer"])
    optimizer = optimizer.lower() if isinstance(optimizer, str) else DEFAULTS["optimizer"]
    bpv = DEFAULTS["bytes_per_value"]
    device_name = train.get("device") or prices["default"]
    device = prices["devices"].get(device_name) if isinstance(device_name, str) else None
    if device is None:
        assumptions.append(f"device {str(device_name)[:60]!r} not in the price table; quoted on {prices['default']}")
        device_name = prices["default"]
        device = prices["devices"][device_name]
    util = train.get("utilisation", prices["default_utilisation"])
    if isinstance(util, bool) or not isinstance(util, (int, float)) or not 0 < util <= 1:
        util = prices["default_utilisation"]
    util = float(util)
    train_flops_per_step = TRAIN_FLOPS_FACTOR * flops * batch
    total_flops = train_flops_per_step * steps
    try:
        seconds = total_flops / (device["peak_tflops"] * 1e12 * util) if total_flops else 0.0
    except OverflowError:
        seconds = math.inf
    seconds = _finite(seconds, assumptions, "the run's time")
    hours = seconds / 3600
    usd = _finite(hours * device["price_per_hour"], assumptions, "the run's price")
    memory = {
        "params_bytes": params * bpv,
        "grads_bytes": params * bpv,
        "optimizer_bytes": params * bpv * OPTIMIZER_STATES.get(optimizer, 2),
        "activations_bytes": act_bytes * batch,
    }
    memory["total_bytes"] = sum(memory.values())
    return {
        "params": params,
        "flops_per_sample": flops,
        "train_flops_per_step": train_flops_per_step,
        "memory": memory,
        "quote": {
            "usd": round(usd, 6),
            "device": device_name,
            "price_per_hour": device["price_per_hour"],
            "peak_tflops": device["peak_tflops"],
            "utilisation": util,
            "hours": hours,
            "steps": steps,
            "batch_size": batch,
            "price_date": prices["date"],
        },
        "assumptions": assumptions,
    }


def _numel(shape, env):
    """The number of values of a shape with the symbols set: the product of its sizes, multiplied as ints
    when every size is a number or a symbol of `env` (the same figure as the product's polynomial, without
    building it); else through the polynomial."""
    n = 1
    for d in shape:
        if type(d) is not int:
            d = env.get(d) if type(d) is str else None
            if type(d) is not int:
                return _value(D.prod(shape), env)
        n *= d
    return n


def _value(d, env):
    """A size or FLOP expression with the symbols set; None when it cannot be evaluated."""
    try:
        return D.substitute(d, env)
    except (ValueError, OverflowError, RecursionError, MemoryError, SyntaxError):
        return None  # an expression no design should hold (a symbol the size arithmetic cannot read)


def quote_on(cost: dict, device_name: str | None = None) -> float:
    """Re-price a cost dict on another GPU of the table (the report's default GPU)."""
    prices = gpu_prices()
    dev = prices["devices"][device_name or prices["default"]]
    q = cost["quote"]
    total = cost["train_flops_per_step"] * q["steps"]
    return total / (dev["peak_tflops"] * 1e12 * q["utilisation"]) / 3600 * dev["price_per_hour"]
