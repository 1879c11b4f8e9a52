"""The LLM solver against a real HTTP server this test starts (an OpenAI-compatible chat endpoint):
the requests it sends, the answers it reads, retries, timeouts and one-line errors."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from archcurator.core.kb import llm
from archcurator.store import kb
from archcurator.tui.cli import main

KB_BLOCK = "## What earlier executed questions taught"


class Endpoint:
    """A chat-completions server on 127.0.0.1: records every request; answers as told."""

    def __init__(self, reply=None, fail_first: int = 0, status: int = 500, delay: float = 0.0):
        self.requests: list[dict] = []
        self.reply = reply or (lambda prompt: "I think <answer>A</answer>")
        self.fail_first, self.status, self.delay = fail_first, status, delay
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):  # noqa: N802 - the http.server hook
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                       "type": self.headers.get("Content-Type"), "body": body})
                if outer.delay:
                    time.sleep(outer.delay)
                if len(outer.requests) <= outer.fail_first:
                    self.send_response(outer.status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "busy"}')
                    return
                prompt = body["messages"][0]["content"]
                out = json.dumps({"choices": [{"message": {"role": "assistant", "content": outer.reply(prompt)},
                                               "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a client that gave up (the timeout test) is not this test's output

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_answer_parsing():
    assert llm.parse_answer("reasoning... <answer>b</answer>", "ABC") == "B"
    assert llm.parse_answer("<answer>A</answer> then <answer> C </answer>", "ABC") == "C"  # the last tag
    assert llm.parse_answer("The answer is B.", "ABC") is None
    assert llm.parse_answer("<answer>D</answer>", "ABC") is None
    assert llm.parse_answer("", "ABC") is None


def test_the_prompt_follows_the_studys_layout(shipped):
    q = next(q for q in shipped if q["family"] == "univariate_regression")
    text = llm.question_prompt(q)
    for heading in ("You are taking the ArchitectureIQ benchmark.", "## Dataset", "## Sample budget",
                    "## Evaluation metric", "## Choices", "### Choice A", "### Choice C", "## Your answer",
                    "<answer>A</answer>"):
        assert heading in text
    assert q["dataset"]["params"]["expression"] in text
    assert "correct_letter" not in text and q["correct_letter"] + "</answer>" not in text.split("## Your")[0]
    for ch in q["choices"]:
        assert str(ch["result"]["mean"]) not in text  # no outcome leaks into the prompt


def test_requests_answers_and_the_key_from_the_environment(seeded_db, monkeypatch, capsys):
    monkeypatch.setenv("ARCHCURATOR_LLM_API_KEY", "sekret-123")
    pack_first = kb.current_pack(seeded_db)[0].prop.text
    with Endpoint(reply=lambda p: "Thinking.\n<answer>B</answer>" if KB_BLOCK in p else "hmm, no tag") as ep:
        code = main(["kb", "replay", "--db", str(seeded_db), "--json", "--no-lofo", "--llm", ep.url,
                     "--llm-model", "local-7b", "--llm-limit", "5"])
        out = capsys.readouterr()
    assert code == 0, out.err
    r = json.loads(out.out)["llm"]
    assert len(ep.requests) == 10  # five questions, without and with the pack
    for req in ep.requests:
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sekret-123"
        assert req["type"] == "application/json"
        b = req["body"]
        assert b["model"] == "local-7b" and b["temperature"] == 0 and b["messages"][0]["role"] == "user"
    prompts = [req["body"]["messages"][0]["content"] for req in ep.requests]
    assert sum(KB_BLOCK in p for p in prompts) == 5 and all(pack_first in p for p in prompts if KB_BLOCK in p)
    assert all(p.index(KB_BLOCK) < p.index("## Current question") for p in prompts if KB_BLOCK in p)
    qs = kb.list_questions(seeded_db, split="test")[:5]
    assert r["n"] == 5 and r["unparsed"] == {"without_kb": 5, "with_kb": 0}
    assert r["with_kb"]["correct"] == sum(q["correct_letter"] == "B" for q in qs)
    assert r["without_kb"]["correct"] == 0
    assert r["endpoint"] == ep.url + "/chat/completions" and r["model"] == "local-7b"
    assert "sekret" not in out.out + out.err
    assert b"sekret" not in seeded_db.read_bytes()  # never stored


def test_retries_then_answers(monkeypatch):
    monkeypatch.delenv("ARCHCURATOR_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with Endpoint(fail_first=2, status=503) as ep:
        c = llm.Client(ep.url, model="m", retries=3, backoff_s=0.01)
        assert llm.parse_answer(c.ask("q"), "ABC") == "A"
    assert len(ep.requests) == 3 and ep.requests[-1]["auth"] is None  # no key: none sent
    with Endpoint(fail_first=9, status=401) as ep:
        c = llm.Client(ep.url, retries=3, backoff_s=0.01)
        with pytest.raises(llm.LLMError, match="HTTP 401") as e:
            c.ask("q")
    assert len(ep.requests) == 1  # a client error is not retried
    assert "\n" not in str(e.value)


def test_a_slow_endpoint_times_out():
    with Endpoint(delay=1.5) as ep:
        c = llm.Client(ep.url, timeout_s=0.3, retries=1, backoff_s=0.01)
        with pytest.raises(llm.LLMError, match=r"no answer within 0\.3 s \(after 2 tries\)"):
            c.ask("q")


def test_an_absent_endpoint_is_one_line_and_exit_2(seeded_db, capsys):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    code = main(["kb", "replay", "--db", str(seeded_db), "--no-lofo", "--llm", url, "--llm-retries", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"archcurator kb replay: {url}/chat/completions: cannot reach the endpoint")
    code = main(["kb", "replay", "--db", str(seeded_db), "--no-lofo", "--llm", "ftp://x"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "not an http(s) URL" in err


def test_a_reply_that_is_not_chat_json(monkeypatch):
    class Broken(Endpoint):
        pass

    with Endpoint() as ep:
        ep.reply = lambda p: "<answer>A</answer>"
        c = llm.Client(ep.url + "/chat/completions", retries=0)  # a full endpoint URL is used as given
        assert c.endpoint == ep.url + "/chat/completions" and c.ask("x").endswith("</answer>")
    assert Broken is not None
    with pytest.raises(llm.LLMError, match="not an OpenAI-compatible chat reply"):
        llm._content(b'{"nope": 1}', "http://x")
