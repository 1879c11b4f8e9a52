"""DesignSummary: what the design is, who made it, the verdict, its size and its latest run's outcome."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..sanitise import visible
from .run_outcome import outcome_text

VERDICT_STYLE = {"block": "bold red", "warn": "bold yellow", "pass": "bold green"}


def money(v) -> str:
    return "—" if v is None else f"${v:,.2f}"


def big_number(n) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f}{unit}"
    return f"{n:,.0f}"


class DesignSummary(Static):
    """Four lines at the top of the side pane."""

    def show(self, view, live_runs: list | None = None) -> None:
        d = view.data
        t = Text()
        t.append(visible(view.id), style="bold")
        if d.get("name") and d.get("name") != view.id:
            t.append(f"  {visible(d['name'])}", style="dim")
        t.append("\n")
        t.append(visible(d.get("author")), style="cyan")
        for k in ("model", "task_set", "run"):
            if d.get(k):
                t.append(f" · {visible(d[k])}")
        t.append("\n")
        verdict = d.get("verdict") or "ungenerated"
        t.append(verdict, style=VERDICT_STYLE.get(verdict, "dim"))
        t.append(f"  {d.get('n_block', 0)} block · {d.get('n_warn', 0)} warn")
        size = []
        if d.get("n_nodes") is not None:
            size.append(f"{d['n_nodes']} nodes")
        if d.get("params") is not None:
            size.append(f"{big_number(d['params'])} params")
        if d.get("cost_a10g_usd") is not None:
            size.append(f"{money(d['cost_a10g_usd'])} on A10G")
        if size:
            t.append("  " + " · ".join(size), style="dim")
        t.append("\n")
        live = [h for h in (live_runs or []) if h.result is None]
        forward = [r for r in (d.get("runs") or []) if r.get("kind") == "forward"]
        if live:
            h = live[-1]
            t.append(f"run: {h.spec.kind} {h.status()}…", style="bold cyan")
        elif forward:
            t.append_text(outcome_text(forward[0], d.get("findings") or [], d.get("verdict")))
        elif d.get("runs"):
            # no forward run, but others stored (a short training): the latest says what happened
            r = d["runs"][0]
            t.append(f"last run: {visible(r.get('kind') or '?')} #{r.get('id')} ", style="bold")
            t.append(visible(r.get("exception") or r.get("status") or "?"),
                     style="green" if r.get("status") == "ok" else "red")
            if r.get("ended_at") or r.get("created_at"):
                t.append(f"  {str(r.get('ended_at') or r.get('created_at'))[:16]}", style="dim")
        else:
            t.append("no run yet — e: forward check · E: short training", style="dim")
        self.update(t, layout=False)
