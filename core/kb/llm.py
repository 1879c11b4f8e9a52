"""An LLM solver for users who run one: the question as ArchitectureIQ's prompt, the pack as a block.

``kb replay --llm URL`` asks an OpenAI-compatible chat endpoint the user
runs (llama.cpp's server, vLLM, Ollama, a hosted API): every held-out
question twice, without and with the pack, and scores the answers like the
rule solver's. Nothing here is needed by the default (rule) solver.

The prompt follows the study's layout (``prompts/templates/header.md`` and
its renderer): a header, ``## Dataset``, ``## Sample budget``, ``##
Evaluation metric``, ``## Choices`` with ``### Choice X`` (schedule, model,
optimizer, loss), ``## Your answer``, then its answer-format section asking
for ``<answer>X</answer>``. The pack goes where the study's sequential
runs put what the solver learned from earlier questions: a block before
``## Current question``. The answer is the letter in the last
``<answer>`` tag (a reply with none counts as wrong and is reported as
unparsed).

The key comes from the environment (``ARCHCURATOR_LLM_API_KEY``, else
``OPENAI_API_KEY``; none is fine for a local server) and is never written
anywhere. Each request has a timeout and is retried on connection errors,
timeouts, 429 and 5xx, with backoff; ``LLMError`` is one line naming the
endpoint and the problem.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .pack import PackEntry, solver_entries
from .stats import paired_difference, wilson

ANSWER_TAG = re.compile(r"<answer>\s*([A-Za-z])\s*</answer>", re.IGNORECASE)
KEY_ENV = ("ARCHCURATOR_LLM_API_KEY", "OPENAI_API_KEY")
MODEL_ENV = "ARCHCURATOR_LLM_MODEL"
MAX_REPLY_BYTES = 4 * 1024 * 1024

HEADER = (
    "You are taking the ArchitectureIQ benchmark.\n\n"
    "Each question describes one **dataset instance** and several **choices** (each choice is one "
    "**candidate**: model, optimizer, loss, and training budget). All choices train on the same dataset "
    "instance. Your task is to identify which choice will achieve the **best test metric** on the held-out "
    "test set after its stated training budget, using architecture and learning-mechanics reasoning only "
    "(no training results are provided)."
)
ANSWER_FORMAT = (
    "---\n## Response format\n\n"
    "Think through the problem step by step. When you are ready to commit to a choice, put your final answer "
    "on its own line wrapped in tags:\n\n<answer>{example}</answer>\n\n"
    "Valid choices: {choices}. Use exactly one letter inside the tags."
)


class LLMError(RuntimeError):
    """The endpoint could not be used; one line naming it and the problem."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


# --------------------------------------------------------------------------- the prompt

_FAMILY_TEXT = {
    "univariate_regression": "univariate regression on `[0, 1]`: input and target are 1-D scalars; training and "
                             "test points are uniform on the domain; labels are noiseless, the target is a "
                             "symbolic expression of `x`.",
    "multivariate_regression": "multivariate regression on `[0, 1]^n`: the target is a symbolic expression of "
                               "`x0..x{n-1}`; points are uniform on the domain; labels are noiseless.",
    "bigram_lm": "bigram language modeling: each example is a window of token ids; labels are the next token at "
                 "each position, sampled from a single fixed bigram law shared by train and test.",
    "xor_classification": "two-class classification in the plane: the class is the sign of `x0 * x1`, with "
                          "some labels flipped.",
    "spiral_classification": "two-class classification in the plane: two interleaved spiral arms.",
    "synthetic_tabular_classification": "binary classification of tabular points by a hidden rule.",
}


def _dataset_block(q: dict) -> list[str]:
    ds = q.get("dataset") if isinstance(q.get("dataset"), dict) else {}
    p = ds.get("params") if isinstance(ds.get("params"), dict) else {}
    fam = q.get("family", ds.get("family"))
    out = ["## Dataset", f"**Family:** {_FAMILY_TEXT.get(fam, str(fam))}", ""]
    facts = []
    for key in ("expression", "input_dim", "train_size", "test_size", "vocab_size", "context_length", "alpha",
                "label_noise", "turns", "noise_std", "rule_family"):
        if key in p and not isinstance(p[key], (dict, list)):
            facts.append(f"- {key}: {p[key]}")
    noise = p.get("noise") if isinstance(p.get("noise"), dict) else {}
    if noise.get("enabled"):
        facts.append(f"- target noise std (training targets): {noise.get('std')}")
    from ..aiq.measure import measured_features

    # what the data itself shows (two instances of a family differ here), measured on its tensors
    facts += [f"- {k} (measured): {v}" for k, v in measured_features(ds).items()]
    metric = (q.get("evaluation") or {}).get("selection_metric") or ds.get("selection_metric", "test metric")
    return out + facts + ["", f"Selection metric: `{metric}` on the test split (lower is better)."]


def _model_text(m: dict) -> str:
    t = m.get("type")
    if t == "mlp":
        acts = m.get("activations") or []
        norms = m.get("layer_norm") or []
        blocks = "; ".join(f"block {i + 1}: {'LayerNorm, ' if i < len(norms) and norms[i] else ''}"
                           f"Linear({m.get('width')}, {m.get('width')}), {a}" for i, a in enumerate(acts))
        slope = m.get("leaky_relu_slope")
        return (f"MLP: Linear({m.get('input_dim', 1)}, {m.get('width')}), then {m.get('depth')} blocks "
                f"({blocks}){', residual' if m.get('residual') else ''}, then Linear({m.get('width')}, "
                f"{m.get('output_dim', 1)})" + (f"; leaky_relu slope {slope}" if slope is not None and
                                                 "leaky_relu" in acts else ""))
    if t == "transformer_lm":
        return (f"causal Transformer LM: token + position embeddings (d_model {m.get('d_model')}), "
                f"{m.get('num_layers')} post-LN encoder layers ({m.get('num_heads')} heads, feed-forward "
                f"{m.get('d_ff')}, GELU, no dropout), a linear head over {m.get('vocab_size')} tokens")
    if t == "kan":
        return (f"KAN (fixed-grid B-splines): {m.get('depth')} hidden layers of width {m.get('width')}, grid "
                f"{m.get('grid_size')} intervals on {m.get('grid_range')}, spline order {m.get('spline_order')}, "
                f"base activation {m.get('base_activation')}")
    return json.dumps(m, sort_keys=True)


def _optimizer_text(o: dict) -> str:
    extra = []
    for k in ("momentum", "betas", "weight_decay"):
        if k in o:
            extra.append(f"{k}={o[k]}")
    return f"{o.get('type')} (lr={o.get('lr')}" + (", " + ", ".join(extra) if extra else "") + ")"


def _loss_text(loss: dict) -> str:
    lid = str(loss.get("loss_id"))
    if lid.endswith(("_l1", "_l2")):
        return f"{lid[:-3]} + {loss.get('lambda')} x mean {lid[-2:].upper()} penalty over the parameter tensors"
    return lid


def question_prompt(q: dict) -> str:
    """One question as the study lays it out, with its answer-format section."""
    lines = [HEADER, "", *_dataset_block(q), "", "## Sample budget"]
    budgets = {json.dumps(ch["candidate"].get("budget"), sort_keys=True) for ch in q["choices"]}
    if len(budgets) == 1:
        b = q["choices"][0]["candidate"].get("budget") or {}
        lines.append(f"- total_samples_seen: {b.get('total_samples_seen')} (same for all choices)")
    else:
        lines.append("- budgets differ across choices; each choice states its own")
    ev = q.get("evaluation") or {}
    lines += ["", "## Evaluation metric",
              f"Each choice is trained with {ev.get('n_seeds', 10)} seeds (from {ev.get('base_seed', 0)}); the "
              f"choice with the best mean final test metric wins.", "", "## Choices"]
    for ch in q["choices"]:
        c = ch["candidate"]
        b = c.get("budget") or {}
        lines += ["", f"### Choice {ch['letter']}", "",
                  f"**Training schedule**: {b.get('training_steps')} steps x batch {b.get('batch_size')} = "
                  f"{b.get('total_samples_seen')} samples", "",
                  f"**Model**: {_model_text(c.get('model') or {})}", "",
                  f"**Optimizer**: {_optimizer_text(c.get('optimizer') or {})}", "",
                  f"**Loss**: {_loss_text(c.get('loss') or {})}"]
    letters = [ch["letter"] for ch in q["choices"]]
    lines += ["", "## Your answer", f"Reply with a single letter ({', '.join(letters)}).", "",
              ANSWER_FORMAT.format(example=letters[0], choices=", ".join(letters))]
    return "\n".join(lines) + "\n"


def pack_block(entries: Sequence[PackEntry]) -> str:
    """The pack as the block placed before the current question."""
    lines = ["## What earlier executed questions taught (knowledge base)",
             "Propositions curated from questions like this one, each with how often it held. They are "
             "tendencies, not laws: weigh them against the current question.", ""]
    for e in entries:
        p = e.prop
        record = "untested" if p.support + p.contradict == 0 else f"held {p.support} times, failed {p.contradict}"
        lines.append(f"{e.rank}. {p.text} [{record}]")
    return "\n".join(lines)


def full_prompt(q: dict, entries: Sequence[PackEntry] | None) -> str:
    body = question_prompt(q)
    entries = solver_entries(entries or [])   # the pack's live entries only, in pack order
    if not entries:
        return body
    return f"{pack_block(entries)}\n\n## Current question\n\n{body}"


def parse_answer(text: str, letters: Sequence[str]) -> str | None:
    """The letter in the last <answer> tag, if it is one of LETTERS."""
    found = ANSWER_TAG.findall(text or "")
    if not found:
        return None
    letter = found[-1].upper()
    return letter if letter in letters else None


# --------------------------------------------------------------------------- the endpoint

def chat_url(url: str) -> str:
    u = url.rstrip("/")
    if u.endswith("/chat/completions"):
        return u
    if not re.match(r"^https?://", u):
        raise LLMError(url, "not an http(s) URL")
    return u + "/chat/completions"


def api_key() -> str | None:
    for name in KEY_ENV:
        v = os.environ.get(name, "").strip()
        if v:
            return v
    return None


@dataclass
class Client:
    """POST {url}/chat/completions; retries, timeouts, one-line errors."""

    url: str
    model: str = ""
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 1.0
    max_tokens: int = 2048

    def __post_init__(self) -> None:
        self.endpoint = chat_url(self.url)
        self.model = self.model or os.environ.get(MODEL_ENV, "") or "default"

    def ask(self, prompt: str) -> str:
        body = json.dumps({"model": self.model, "messages": [{"role": "user", "content": prompt}],
                           "temperature": 0, "max_tokens": self.max_tokens}).encode()
        headers = {"Content-Type": "application/json"}
        key = api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                    raw = r.read(MAX_REPLY_BYTES + 1)
                if len(raw) > MAX_REPLY_BYTES:
                    raise LLMError(self.endpoint, f"reply larger than {MAX_REPLY_BYTES} bytes")
                return _content(raw, self.endpoint)
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code} {e.reason}"
                if e.code != 429 and e.code < 500:
                    raise LLMError(self.endpoint, last) from None
            except urllib.error.URLError as e:
                last = f"cannot reach the endpoint ({getattr(e.reason, 'strerror', None) or e.reason})"
            except TimeoutError:
                last = f"no answer within {self.timeout_s:g} s"
            except OSError as e:
                last = f"connection failed ({e.strerror or e.__class__.__name__})"
        raise LLMError(self.endpoint, f"{last} (after {self.retries + 1} tries)")


def _content(raw: bytes, where: str) -> str:
    try:
        obj = json.loads(raw.decode("utf-8", errors="replace"))
        msg = obj["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMError(where, "not an OpenAI-compatible chat reply") from None
    parts = [str(msg.get(k)) for k in ("reasoning_content", "content") if isinstance(msg, dict) and msg.get(k)]
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- the replay

def llm_replay(questions: Sequence[dict], entries: Sequence[PackEntry], ask: Callable[[str], str], *,
               progress: Callable[[int, int], None] | None = None) -> dict:
    """Each question without and with the pack; accuracy, unparsed replies, the paired margin."""
    ok_with, ok_without, rows = [], [], {}
    unparsed = {"with_kb": 0, "without_kb": 0}
    for i, q in enumerate(questions, 1):
        letters = [ch["letter"] for ch in q["choices"]]
        row = {"correct": q["correct_letter"]}
        for name, pack in (("without_kb", None), ("with_kb", entries)):
            letter = parse_answer(ask(full_prompt(q, pack)), letters)
            if letter is None:
                unparsed[name] += 1
            row[name] = letter
            (ok_with if name == "with_kb" else ok_without).append(letter == q["correct_letter"])
        rows[q["question_id"]] = row
        if progress is not None:
            progress(i, len(questions))

    def acc(flags):
        k, n = sum(flags), len(flags)
        lo, hi = wilson(k, n)
        return {"correct": k, "n": n, "accuracy": k / n if n else None, "ci95": [lo, hi]}

    d, lo, hi = paired_difference(ok_with, ok_without)
    return {"n": len(questions), "with_kb": acc(ok_with), "without_kb": acc(ok_without), "unparsed": unparsed,
            "difference": {"points": d, "ci95": [lo, hi], "within_noise": lo <= 0.0 <= hi}, "answers": rows}
