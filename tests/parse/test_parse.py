"""The static parser against real torch: model files written for this suite are
parsed without being run, then instantiated and run for real here (they are
ours) to compare parameter counts and output shapes."""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from parsehelp import output_shapes

from archcurator.core.parse import ParseFailure, design_params, discover_modules, parse_source

MODELS = Path(__file__).parent / "models"
ROOT = Path(__file__).resolve().parents[2]


def _load_real(relpath: str, name: str, args: dict):
    path = MODELS / relpath
    if "/" in relpath:  # a package: import it as one so its relative imports work
        pkg_dir = str(path.parent.parent)
        sys.path.insert(0, pkg_dir)
        try:
            mod = importlib.import_module(relpath[:-3].replace("/", "."))
        finally:
            sys.path.remove(pkg_dir)
    else:
        spec = importlib.util.spec_from_file_location(f"_parse_suite_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = getattr(mod, name)(**args)
    model.eval()
    return model


def _example(inputs):
    out = []
    for shape, dtype in inputs:
        if dtype == "int64":
            out.append(torch.randint(0, 50, shape))
        else:
            out.append(torch.randn(shape))
    return out


def _shapes(out):
    if isinstance(out, (tuple, list)):
        return [tuple(o.shape) for o in out if o is not None]
    return [tuple(out.shape)]


def _verify(design):
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    return verify_graph(Design.from_dict(design))


CLEAN = [
    ("tiny_cnn.py", "TinyCNN", {}, [([2, 3, 32, 32], "float32")]),
    ("resnet_small.py", "resnet_small", {}, [([2, 3, 32, 32], "float32")]),
    ("resnet_small.py", "ResNetSmall", {"layers": [1, 1, 1], "width": 8}, [([2, 3, 32, 32], "float32")]),
    ("vgg_cfg.py", "vgg_a", {}, [([2, 3, 32, 32], "float32")]),
    ("vgg_cfg.py", "vgg_b_bn", {"num_classes": 3}, [([2, 3, 32, 32], "float32")]),
    ("lstm_lm.py", "LSTMClassifier", {}, [([2, 12], "int64")]),
    ("lstm_lm.py", "TiedLM", {}, [([2, 12], "int64")]),
    ("attention.py", "TinyGPT", {}, [([2, 16], "int64")]),
    ("attention.py", "TinyViT", {}, [([2, 3, 32, 32], "float32")]),
    ("attention.py", "TorchEncoder", {}, [([2, 10, 32], "float32")]),
    ("pkg/net.py", "PkgNet", {}, [([2, 3, 32, 32], "float32")]),
    ("styles.py", "MLPNet", {}, [([2, 20], "float32")]),
    ("styles.py", "DictNet", {}, [([2, 3, 16, 16], "float32")]),
    ("styles.py", "SharedBlock", {}, [([2, 8], "float32")]),
    ("classic.py", "MnistNet", {}, [([2, 1, 28, 28], "float32")]),
    ("classic.py", "Generator", {}, [([2, 16, 1, 1], "float32")]),
    ("classic.py", "UNet", {}, [([2, 3, 32, 32], "float32")]),
    ("nanogpt.py", "GPT", {}, [([2, 16], "int64")]),
    ("nanogpt.py", "gpt_manual", {}, [([2, 16], "int64")]),
]
IDS = [f"{f}:{n}" for f, n, _, _ in CLEAN]


@pytest.mark.slow
@pytest.mark.parametrize("relpath,name,args,inputs", CLEAN, ids=IDS)
def test_clean_model_matches_real_torch(relpath, name, args, inputs):
    from archcurator.core.build import build_module
    from archcurator.core.graph import Design

    result = parse_source(MODELS / relpath, name, args, inputs)
    design = result.design
    real = _load_real(relpath, name, args)
    real_params = sum(p.numel() for p in real.parameters())

    # parameter count: the parser's own count and the project's cost model
    assert design_params(design) == real_params
    report = _verify(design)
    if name != "TiedLM":  # see test_tied_head_keeps_its_bias
        assert report.cost["params"] == real_params
    assert report.verdict != "block", [f.message for f in report.findings if f.severity == "block"]

    # output shapes: the design built as a module and run, against the real forward
    xs = _example(inputs)
    with torch.no_grad():
        expected = _shapes(real(*xs))
        built = build_module(Design.from_dict(design))
        built.eval()
        got = _shapes(built(*xs))
    assert got == expected


def test_einops_mixer_without_einops():
    """einops.rearrange is followed (the package need not be installed); DropPath is an identity."""
    from archcurator.core.build import build_module
    from archcurator.core.graph import Design

    r = parse_source(MODELS / "einops_mixer.py", "PatchMixer", {}, [([2, 3, 16, 16], "float32")])
    ops = [n["op"] for n in r.design["nodes"]]
    assert ops[:2] == ["Reshape", "Permute"] and ops.count("Identity") == 2
    assert [n["args"]["shape"] for n in r.design["nodes"] if n["op"] == "Reshape"] == [[-1, 3, 4, 4, 4, 4],
                                                                                        [-1, 16, 48]]
    nn_equivalent = torch.nn.ModuleList([
        torch.nn.Linear(48, 32), torch.nn.Embedding(16, 32),
        torch.nn.LayerNorm(32), torch.nn.Linear(32, 32), torch.nn.LayerNorm(32), torch.nn.Linear(32, 32),
        torch.nn.Linear(32, 5)])
    assert _verify(r.design).cost["params"] == sum(p.numel() for p in nn_equivalent.parameters())
    built = build_module(Design.from_dict(r.design))
    with torch.no_grad():
        assert tuple(built(torch.randn(2, 3, 16, 16)).shape) == (2, 5)


def test_tied_head_keeps_its_bias():
    design = parse_source(MODELS / "lstm_lm.py", "TiedLM", {}, [([2, 12], "int64")]).design
    real = _load_real("lstm_lm.py", "TiedLM", {})
    assert _verify(design).cost["params"] == sum(p.numel() for p in real.parameters())


@pytest.mark.parametrize("name", ["BrokenNet", "BrokenChannels"])
def test_broken_model_blocks(name):
    inputs = [([2, 3, 16, 16], "float32")]
    design = parse_source(MODELS / "broken_linear.py", name, {}, inputs).design
    real = _load_real("broken_linear.py", name, {})
    with pytest.raises(RuntimeError):
        with torch.no_grad():
            real(*_example(inputs))
    assert _verify(design).verdict == "block"


def test_ids_args_and_shares():
    d = parse_source(MODELS / "resnet_small.py", "resnet_small", {}, [([2, 3, 32, 32], "float32")]).design
    nodes = {n["id"]: n for n in d["nodes"]}
    # torch's qualified names, positional constructor args turned into names
    assert nodes["layer2.0.downsample.0"]["args"] == {"in_channels": 16, "out_channels": 32, "kernel_size": 1,
                                                       "stride": 2, "bias": False}
    assert nodes["layer1.0.conv1"]["op"] == "Conv2d"
    # the block's relu is called twice: the second call shares the first
    second = [n for n in d["nodes"] if n.get("shares") == "layer1.0.relu"]
    assert len(second) == 1 and second[0]["op"] == "ReLU"
    # x.view(x.size(0), -1): the batch size becomes -1, never the given 2
    reshape = [n for n in d["nodes"] if n["op"] == "Reshape"][0]
    assert reshape["args"]["shape"] == [-1, 64]
    # residual += became an Add of the two branches
    assert any(n["op"] == "Add" and n["id"].startswith("layer1.0.") for n in d["nodes"])
    assert d["meta"]["source"].endswith("resnet_small.py:69")
    assert d["inputs"] == [{"id": "x", "shape": [2, 3, 32, 32], "dtype": "float32"}]

    shared = parse_source(MODELS / "styles.py", "SharedBlock", {}, [([2, 8], "float32")]).design
    again = [n for n in shared["nodes"] if n.get("shares")]
    assert {n["shares"] for n in again} == {"block.0", "block.1"}


def test_symbolic_inputs():
    d = parse_source(MODELS / "tiny_cnn.py", "TinyCNN").design
    assert d["inputs"] == [{"id": "x", "shape": ["B", 3, "H", "W"], "dtype": "float32"}]
    d = parse_source(MODELS / "lstm_lm.py", "LSTMClassifier").design
    assert d["inputs"] == [{"id": "tokens", "shape": ["B", "T"], "dtype": "int64"}]
    d = parse_source(MODELS / "resnet_small.py", "resnet_small").design
    reshape = [n for n in d["nodes"] if n["op"] == "Reshape"][0]
    assert reshape["args"]["shape"] == ["B", 64]
    d = parse_source(MODELS / "attention.py", "TinyGPT", inputs=["B,16:int64"]).design
    assert d["inputs"][0]["shape"] == ["B", 16]
    views = [n["args"]["shape"] for n in d["nodes"] if n["op"] == "Reshape"]
    assert ["B", 16, 4, 8] in views and ["B", 16, 32] in views


def test_weight_tying_either_way():
    # the head's weight is given to the embedding: the first one used owns it, the other shares it
    d = parse_source(MODELS / "nanogpt.py", "GPT", {}, ["2,16:int64"]).design
    assert [(n["id"], n["shares"]) for n in d["nodes"] if n.get("shares")] == [("lm_head", "transformer.wte")]
    d = parse_source(MODELS / "lstm_lm.py", "TiedLM", {}, ["2,12:int64"]).design
    assert [(n["id"], n["shares"]) for n in d["nodes"] if n.get("shares")] == [("drop_1", "drop"),
                                                                              ("decoder", "encoder")]


def test_tuple_unpacking_and_slicing():
    d = parse_source(MODELS / "lstm_lm.py", "LSTMClassifier", {}, [([2, 12], "int64")]).design
    sel = [n for n in d["nodes"] if n["op"] == "Select"]
    assert sel and sel[0]["args"] == {"dim": 1, "index": -1} and sel[0]["in"] == ["lstm"]
    d = parse_source(MODELS / "attention.py", "TinyViT", {}, [([2, 3, 32, 32], "float32")]).design
    mha = [n for n in d["nodes"] if n["op"] == "MultiheadAttention"]
    assert len(mha) == 2 and mha[0]["args"]["batch_first"] is True
    params = {n["id"]: n for n in d["nodes"] if n["op"] == "Parameter"}
    assert params["cls_token"]["args"]["shape"] == [1, 1, 48]
    assert params["pos_embed"]["args"]["shape"] == [1, 17, 48]
    expand = [n for n in d["nodes"] if n["op"] == "Expand"][0]
    assert expand["args"]["shape"] == [2, -1, -1]


def test_unknown_branch_warns_with_line():
    r = parse_source(MODELS / "styles.py", "Branchy", {}, [([2, 8], "float32")])
    msgs = [str(w) for w in r.warnings]
    assert any(m.startswith(f"{MODELS / 'styles.py'}:102: `if x.sum() > 0`") and "first branch" in m
               for m in msgs), msgs
    assert any("'b'" in m and "never reached" in m for m in msgs), msgs
    assert r.design["meta"]["parser_warnings"][0]["line"].endswith("styles.py:102")
    assert [n["id"] for n in r.design["nodes"] if n["op"] != "Parameter"] == ["a"]  # the condition's ops are not kept
    # the branch not taken: its layer is built, so torch counts its parameters; nothing reads them
    assert {n["id"] for n in r.design["nodes"] if n["op"] == "Parameter"} == {"b.weight", "b.bias"}
    findings = _verify(r.design).findings
    assert any(f.rule == "parse.unfollowed" for f in findings)


def test_unknown_branch_with_same_structure_is_followed_once():
    r = parse_source(MODELS / "styles.py", "SameBranches", {}, [([2, 8], "float32")])
    assert r.warnings == []
    assert [n["op"] for n in r.design["nodes"]] == ["Linear", "Dropout"]


def test_builder_weights_argument_is_ignored():
    r = parse_source(MODELS / "resnet_small.py", "resnet_small", {"weights": "IMAGENET", "num_classes": 3},
                     [([1, 3, 32, 32], "float32")])
    assert r.design["nodes"][-1]["args"]["out_features"] == 3
    assert any("'weights' ignored" in w.message for w in r.warnings)


def test_lightning_module_and_namespace_args(tmp_path):
    src = tmp_path / "lit.py"
    src.write_text(
        "import pytorch_lightning as pl\n"
        "import torch.nn as nn\n"
        "class Lit(pl.LightningModule):\n"
        "    def __init__(self, args):\n"
        "        super().__init__()\n"
        "        self.save_hyperparameters()\n"
        "        self.net = nn.Sequential(nn.Linear(args.inp, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 2))\n"
        "    def forward(self, x):\n"
        "        return self.net(x)\n"
        "    def training_step(self, batch, idx):\n"
        "        return self(batch[0]).sum()\n")
    r = parse_source(src, "Lit", {"args": {"inp": 6, "hidden": 12}}, ["4,6"])
    assert [n["op"] for n in r.design["nodes"]] == ["Linear", "ReLU", "Linear"]
    assert design_params(r.design) == 6 * 12 + 12 + 12 * 2 + 2


def test_missing_entry_and_bad_files(tmp_path):
    with pytest.raises(ParseFailure) as e:
        parse_source(MODELS / "tiny_cnn.py", "NoSuchNet")
    assert str(MODELS / "tiny_cnn.py") in str(e.value) and "NoSuchNet" in str(e.value)
    bad = tmp_path / "bad.py"
    bad.write_text("class X(:\n")
    with pytest.raises(ParseFailure, match=r"bad\.py:1"):
        parse_source(bad, "X")
    plain = tmp_path / "plain.py"
    plain.write_text("def helper(a=1):\n    return a + 1\n")
    with pytest.raises(ParseFailure, match="did not build a recognised nn.Module"):
        parse_source(plain, "helper")


def test_discover_modules(tmp_path):
    names = discover_modules(MODELS / "styles.py")
    assert names == ["MLPNet", "Gated", "DictNet", "SharedBlock", "Branchy", "SameBranches"]
    found = discover_modules(MODELS)
    assert "pkg/net.py:PkgNet" in found and "lstm_lm.py:TiedLM" in found
    assert not any(f.endswith(":BasicBlock") for f in found)  # needs constructor arguments
    assert not any(f.endswith(":ResNetSmall") for f in found)


def test_folder_entries_parse_with_symbolic_inputs():
    for entry in discover_modules(MODELS):
        rel, name = entry.split(":")
        if rel == "evil.py":
            continue
        try:
            d = parse_source(MODELS / rel, name).design
        except ParseFailure:
            continue
        assert d["format"] == "archgraph/1" and d["nodes"]
        assert all(i["shape"][0] == "B" for i in d["inputs"])


# ------------------------------------------------------------------ safety
def test_source_is_never_executed(tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv("ARCHCURATOR_TEST_MARKER", str(marker))
    default_marker = "/tmp/archcurator-parse-marker"
    before = set(glob.glob(default_marker + "*"))
    mods_before = set(sys.modules)
    r = parse_source(MODELS / "evil.py", "Evil", {}, [([2, 4], "float32")])
    # and through the command line, in a child process
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "parse", str(MODELS / "evil.py"),
                           "--entry", "Evil",
                           "--input", "2,4", "--json"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "ARCHCURATOR_TEST_MARKER": str(marker)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    assert set(glob.glob(default_marker + "*")) == before
    assert not any("evil" in m for m in set(sys.modules) - mods_before)
    # what it could follow is still there; what it refused is named
    assert [n["op"] for n in r.design["nodes"]] == ["Linear"]
    assert any("open" in w.message for w in r.warnings)


def test_new_constructs_are_followed_never_executed(tmp_path, monkeypatch):
    """autograd.Function.apply, einops (layers and functions), locals(), setattr, checkpoint, numpy
    buffers: followed on shapes, and none of the payloads in the file runs."""
    marker = tmp_path / "marker"
    monkeypatch.setenv("ARCHCURATOR_TEST_MARKER", str(marker))
    mods_before = set(sys.modules)
    r = parse_source(MODELS / "evil_constructs.py", "Block", {}, [([2, 16], "float32")])
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "parse", str(MODELS / "evil_constructs.py"),
                           "--entry", "Block", "--input", "2,16", "--json"], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "ARCHCURATOR_TEST_MARKER": str(marker)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    assert not any(m.startswith(("einops", "numpy")) or "evil" in m for m in set(sys.modules) - mods_before)
    ops = [n["op"] for n in r.design["nodes"]]
    assert "Linear" in ops and "Reshape" in ops
    assert design_params(r.design) == 8 * 8 + 8


def test_args_build_the_sources_own_config_classes():
    """A dict for a parameter annotated with a source class builds that class (its defaults fill in);
    fields given to a model whose constructor takes one `config` build its config class."""
    r = parse_source(MODELS / "configs.py", "Net", {"dims": {"hidden": 32}}, [([2, 4], "float32")])
    assert design_params(r.design) == 4 * 32 + 32 + 32 * 3 + 3 and not r.warnings
    r = parse_source(MODELS / "configs.py", "TinyModel", {"hidden_size": 6}, [([2, 5], "int64")])
    assert design_params(r.design) == 20 * 6 and not r.warnings  # isinstance(config, PretrainedConfig) held


def test_namespace_package_siblings_are_found(tmp_path):
    pkg = tmp_path / "nspkg"
    pkg.mkdir()
    (pkg / "blocks.py").write_text("import torch.nn as nn\n\ndef block(c):\n    return nn.Conv2d(c, c, 3, padding=1)\n")
    (pkg / "net.py").write_text("import torch.nn as nn\nfrom nspkg.blocks import block\n\n\nclass Net(nn.Module):\n"
                                "    def __init__(self):\n        super().__init__()\n        self.b = block(4)\n\n"
                                "    def forward(self, x):\n        return self.b(x)\n")
    r = parse_source(pkg / "net.py", "Net", {}, [([1, 4, 8, 8], "float32")])
    assert [n["op"] for n in r.design["nodes"]] == ["Conv2d"] and not r.warnings


def test_runaway_code_is_bounded(tmp_path):
    src = tmp_path / "loop.py"
    src.write_text(
        "import torch.nn as nn\n"
        "N = 10 ** 12\n"
        "class Loop(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        s = 'x' * N\n"
        "        n = 2 ** 10 ** 9\n"
        "        a = 'x'.center(10 ** 10)\n"
        "        b = '%0*d' % (10 ** 9, 1)\n"
        "        c = 3\n"
        "        for _ in range(40):\n"
        "            c = c * c\n"
        "        def rec(k):\n"
        "            return rec(k + 1)\n"
        "        rec(0)\n"
        "        while True:\n"
        "            pass\n"
        "    def forward(self, x):\n"
        "        return x\n")
    with pytest.raises(ParseFailure):
        parse_source(src, "Loop")


# ------------------------------------------------------------------ command line
def _ns(**kw):
    base = dict(file=str(MODELS / "tiny_cnn.py"), entry="TinyCNN", entry_args=None, inputs=[], json=True)
    base.update(kw)
    return argparse.Namespace(**base)


def test_cli_missing_name_exit_2(capsys):
    from archcurator.tui.commands import parse_cmd

    rc = parse_cmd.run(_ns(entry="Missing"))
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(MODELS / "tiny_cnn.py") in lines[0] and "Missing" in lines[0]


def test_cli_json_and_errors(capsys):
    import json

    from archcurator.tui.commands import parse_cmd

    assert parse_cmd.run(_ns(inputs=["2,3,32,32"], entry_args='{"num_classes": 5}')) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["format"] == "archgraph/1" and d["nodes"][-1]["args"]["out_features"] == 5
    assert parse_cmd.run(_ns(entry_args="{not json")) == 2
    assert "--args" in capsys.readouterr().err
    assert parse_cmd.run(_ns(inputs=["2,x?"])) == 2
    assert parse_cmd.run(_ns(file=str(MODELS / "nope.py"))) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "nope.py" in err[1]
    assert parse_cmd.run(_ns(json=False, inputs=["2,3,32,32"])) == 0
    assert "params:  5,450" in capsys.readouterr().out


def _one_error(capsys, rc):
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1, err
    return lines[0]


def test_cli_file_with_nul_bytes_is_one_clean_line(tmp_path, capsys):
    """Python fails a source holding NUL bytes as a whole, with no line number: the line names the
    file, never `junk.py:None:`."""
    from archcurator.tui.commands import parse_cmd

    junk = tmp_path / "junk.py"
    junk.write_bytes(b"import torch\x00\nclass A:\n    pass\n")
    line = _one_error(capsys, parse_cmd.run(_ns(file=str(junk), entry="A")))
    assert line.startswith(f"archcurator parse: {junk}: cannot parse") and "None" not in line


@pytest.mark.parametrize("head,said", [(b"", "2: cannot parse: byte 0xe9 is not utf-8 text"),
                                       (b"# -*- coding: nosuch -*-\n", "1: cannot parse: unknown encoding: nosuch")])
def test_cli_file_that_is_not_text_in_its_encoding_is_refused_as_python_refuses_it(tmp_path, capsys, head, said):
    """A byte that is not UTF-8 in a comment: ast.parse of the bytes let it pass, Python's import refuses the
    file (SyntaxError); a coding cookie naming Latin-1 makes the same bytes text."""
    from archcurator.tui.commands import parse_cmd

    body = b"import torch.nn as nn\n# caf\xe9\nclass A(nn.Module):\n    pass\n"
    bad = tmp_path / "bad.py"
    bad.write_bytes(head + body)
    line = _one_error(capsys, parse_cmd.run(_ns(file=str(bad), entry="A")))
    assert line.startswith(f"archcurator parse: {bad}:{said}")
    bad.write_bytes(b"# -*- coding: latin-1 -*-\n" + body)
    with pytest.raises(Exception, match="nothing of 'A' recognised|did not build"):
        parse_source(bad, "A", {}, [([2, 4], "float32")])


def test_cli_folder_is_said_to_be_a_folder(tmp_path, capsys):
    from archcurator.tui.commands import parse_cmd

    (tmp_path / "m.py").write_text((MODELS / "tiny_cnn.py").read_text())
    line = _one_error(capsys, parse_cmd.run(_ns(file=str(tmp_path))))
    assert f"{tmp_path}: is a folder" in line and "no such file" not in line


@pytest.mark.parametrize("spec", ["abc", "2,3,h-w", "input.png", "2,3,32,32:floaty"])
def test_cli_input_that_is_not_a_shape_is_refused_saying_what_it_takes(capsys, spec):
    from archcurator.tui.commands import parse_cmd

    line = _one_error(capsys, parse_cmd.run(_ns(inputs=[spec])))
    assert repr(spec) in line
    if "float" not in spec:
        assert "--input takes SHAPE[:DTYPE]" in line


@pytest.mark.parametrize("spec,shape", [("B,3,H,W", ["B", 3, "H", "W"]), ("2x3x32x32", [2, 3, 32, 32]),
                                        ("Batch,3,32,32", ["Batch", 3, 32, 32])])
def test_input_shapes_with_symbols_and_x(spec, shape):
    from archcurator.core.parse import parse_input_spec

    assert parse_input_spec(spec) == (shape, "float32")


def test_cli_unknown_args_keys_are_named_in_a_warning(capsys):
    import json

    from archcurator.tui.commands import parse_cmd

    rc = parse_cmd.run(_ns(inputs=["2,3,32,32"], entry_args='{"num_classes": 5, "num_clases": 7, "depht": 3}'))
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["nodes"][-1]["args"]["out_features"] == 5
    msgs = [w["message"] for w in d["meta"]["parser_warnings"]]
    assert any("'num_clases'" in m and "'depht'" in m and "TinyCNN" in m for m in msgs), msgs
    rc = parse_cmd.run(_ns(inputs=["2,3,32,32"], entry_args='{"num_classes": 5}'))
    d = json.loads(capsys.readouterr().out)
    assert not any("not a parameter" in w["message"] for w in d["meta"]["parser_warnings"])


def test_args_of_a_builder_taking_kwargs_pass_on_without_warning(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch.nn as nn\n"
                   "def build(width=4, **kw):\n"
                   "    return nn.Linear(width, kw.get('out', 2))\n")
    r = parse_source(src, "build", {"width": 8, "out": 3}, [([2, 8], "float32")])
    assert r.design["nodes"][0]["args"]["out_features"] == 3
    assert not any("not a parameter" in w.message for w in r.warnings)


def test_cli_entry_point_subprocess():
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "parse", str(MODELS / "vgg_cfg.py"),
                           "--entry", "VGGX"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "vgg_cfg.py" in proc.stderr
    assert "textual" not in proc.stderr


def test_cli_module_imports_neither_textual_nor_torch():
    code = ("import sys, archcurator.tui.commands.parse_cmd, archcurator.core.parse as P; "
            "P.parse_source('tests/parse/models/tiny_cnn.py', 'TinyCNN'); "
            "bad = [m for m in ('textual', 'torch') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_full_reduction_of_a_tensor_of_unknown_shape_is_a_scalar(tmp_path):
    """`.mean()` over every dim is a scalar whatever the shape it reduces (a VQ-VAE's commitment
    loss over a tensor the parser cannot size): `unsqueeze(0)` after it is [1], as torch makes it."""
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    src = tmp_path / "m.py"
    src.write_text("import torch\nimport torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.fc = nn.Linear(8, 8)\n"
                   "    def forward(self, x):\n"
                   "        y = self.fc(x)\n"
                   "        picked = y[y > 0]\n"
                   "        return y, picked.pow(2).mean().unsqueeze(0)\n")
    spec = importlib.util.spec_from_file_location("m_unknown_reduce", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    real = [list(t.shape) for t in mod.M()(torch.randn(2, 8))]
    d = parse_source(src, "M", inputs=[([2, 8], "float32")]).design
    rep = verify_graph(Design.from_dict(d))
    ours = []
    for ref in d["outputs"]:
        node, _, k = ref.partition(":")
        ours.append(list(rep.types[node][int(k or 0)].shape))
    assert ours == real == [[2, 8], [1]]


_REAL_WORLD_IDIOMS = {
    # stargan's discriminator: a kernel size computed with numpy on known numbers
    "numpy_size": ("import numpy as np\nimport torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self, image_size=32, repeat_num=3):\n"
                   "        super().__init__()\n"
                   "        k = int(image_size / np.power(2, repeat_num))\n"
                   "        self.conv = nn.Conv2d(3, 5, kernel_size=k, bias=False)\n"
                   "    def forward(self, x):\n"
                   "        return self.conv(x)\n", [[2, 3, 32, 32]]),
    # whisper's decoder: the output head is the token embedding read as a matrix
    "matmul_tied_head": ("import torch\nimport torch.nn as nn\n"
                         "class M(nn.Module):\n"
                         "    def __init__(self):\n"
                         "        super().__init__()\n"
                         "        self.emb = nn.Embedding(50, 16)\n"
                         "        self.ln = nn.LayerNorm(16)\n"
                         "    def forward(self, idx):\n"
                         "        x = self.ln(self.emb(idx))\n"
                         "        return (x @ torch.transpose(self.emb.weight.to(x.dtype), 0, 1)).float()\n",
                         [[2, 7, "int64"]]),
    "f_linear_tied_head": ("import torch.nn as nn\nimport torch.nn.functional as F\n"
                           "class M(nn.Module):\n"
                           "    def __init__(self):\n"
                           "        super().__init__()\n"
                           "        self.wte = nn.Embedding(40, 8)\n"
                           "    def forward(self, idx):\n"
                           "        x = self.wte(idx)\n"
                           "        return F.linear(x, self.wte.weight), x @ self.wte.weight.T\n",
                           [[2, 5, "int64"]]),
    # detr: queries repeated once per image of the batch (a count read off the input's shape)
    "repeat_by_batch": ("import torch\nimport torch.nn as nn\n"
                        "class M(nn.Module):\n"
                        "    def __init__(self):\n"
                        "        super().__init__()\n"
                        "        self.q = nn.Linear(8, 8)\n"
                        "    def forward(self, src, query):\n"
                        "        bs = src.shape[0]\n"
                        "        q = query.unsqueeze(1).repeat(1, bs, 1)\n"
                        "        return self.q(torch.zeros_like(q)) + q\n", [[3, 8], [5, 8]]),
    # pygcn: a graph convolution's sparse-dense product
    "spmm": ("import torch\nimport torch.nn as nn\n"
             "class M(nn.Module):\n"
             "    def __init__(self):\n"
             "        super().__init__()\n"
             "        self.weight = nn.Parameter(torch.randn(16, 4))\n"
             "    def forward(self, x, adj):\n"
             "        return torch.spmm(adj, torch.mm(x, self.weight))\n", [[10, 16], [10, 10]]),
    # pyGAT: attention masked by the adjacency with torch.where, then softmax and a product
    "where_mask": ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.fc = nn.Linear(16, 10)\n"
                   "    def forward(self, x, adj):\n"
                   "        e = self.fc(x)\n"
                   "        att = torch.where(adj > 0, e, -9e15 * torch.ones_like(e))\n"
                   "        att2 = e.where(adj > 0, 0.0)\n"
                   "        return F.softmax(att, dim=1) @ x, att2\n", [[10, 16], [10, 10]]),
    # CLIP's text encoder: the features at each sequence's end-of-text token
    "pick_per_row": ("import torch\nimport torch.nn as nn\n"
                     "class M(nn.Module):\n"
                     "    def __init__(self):\n"
                     "        super().__init__()\n"
                     "        self.emb = nn.Embedding(30, 8)\n"
                     "        self.proj = nn.Parameter(torch.randn(8, 4))\n"
                     "    def forward(self, text):\n"
                     "        x = self.emb(text)\n"
                     "        return x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.proj\n",
                     [[3, 7, "int64"]]),
    # torchvision's ViT: a learned table made from a constant built in the constructor
    "parameter_from_a_constant": ("import torch\nimport torch.nn as nn\n"
                                  "class M(nn.Module):\n"
                                  "    def __init__(self, n=5, d=8):\n"
                                  "        super().__init__()\n"
                                  "        self.pos = nn.Parameter(torch.empty(1, n, d).normal_(std=0.02))\n"
                                  "        self.fc = nn.Linear(d, d)\n"
                                  "    def forward(self, x):\n"
                                  "        return self.fc(x + self.pos)\n", [[2, 5, 8]]),
    # attention-is-all-you-need: one embedding given another's (smaller) table
    "embedding_given_a_table": ("import torch.nn as nn\n"
                                "class M(nn.Module):\n"
                                "    def __init__(self):\n"
                                "        super().__init__()\n"
                                "        self.src = nn.Embedding(100, 8)\n"
                                "        self.trg = nn.Embedding(90, 8)\n"
                                "        self.src.weight = self.trg.weight\n"
                                "    def forward(self, a, b):\n"
                                "        return self.src(a) + self.trg(b)\n", [[2, 5, "int64"], [2, 5, "int64"]]),
}


@pytest.mark.parametrize("name", sorted(_REAL_WORLD_IDIOMS))
def test_real_world_idioms_count_and_shape_as_torch(tmp_path, name):
    from archcurator.core.graph import Design
    from archcurator.core.verify import verify_graph

    text, specs = _REAL_WORLD_IDIOMS[name]
    src = tmp_path / f"{name}.py"
    src.write_text(text)
    spec = importlib.util.spec_from_file_location(f"idiom_{name}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.M()
    xs = [torch.randint(0, 20, s[:-1]) if s[-1] == "int64" else torch.randn(s) for s in specs]
    y = model(*xs)
    real = [list(t.shape) for t in (y if isinstance(y, tuple) else (y,))]
    real_params = sum(p.numel() for p in model.parameters())
    inputs = [(s[:-1], "int64") if s[-1] == "int64" else (s, "float32") for s in specs]
    d = parse_source(src, "M", inputs=inputs).design
    rep = verify_graph(Design.from_dict(d))
    assert (rep.cost["params"], output_shapes(d, rep)) == (real_params, real)
    assert not [f for f in rep.findings if f.severity == "block"]


def test_a_weight_read_transposed_for_something_else_enters_the_graph(tmp_path):
    """Only a matmul with it becomes a tied Linear: any other use of `w.t()` is the weight itself,
    transposed (a design cannot tie a Parameter node, so it is counted again, with the warning)."""
    src = tmp_path / "m.py"
    src.write_text("import torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.fc = nn.Linear(6, 4)\n"
                   "    def forward(self, x):\n"
                   "        return self.fc(x) + self.fc.weight.t().sum()\n")
    r = parse_source(src, "M", inputs=[([3, 6], "float32")])
    ops = {n["id"]: (n["op"], n["in"]) for n in r.design["nodes"]}
    assert ops["fc.weight"][0] == "Parameter"
    assert ("Transpose", ["fc.weight"]) in ops.values()
    assert any("fc.weight" in w.message and "used directly" in w.message for w in r.warnings)


def test_constructs_followed_for_real_world_files_are_never_executed(tmp_path):
    """numpy math on sizes, tied heads read as matrices, torch.where, spmm, repeat by the batch:
    followed on shapes through the command line, while the file's payloads never run."""
    marker = tmp_path / "ran"
    src = tmp_path / "m.py"
    src.write_text(
        "import os\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
        f"os.system('touch {marker}')\n"
        "HUGE = np.power(10, 10 ** 9)\n"
        "class M(nn.Module):\n"
        "    def __init__(self, size=32):\n"
        "        super().__init__()\n"
        f"        open('{marker}', 'w')\n"
        "        self.emb = nn.Embedding(int(size / np.power(2, 2)), 8)\n"
        "        np.power(2.0, 10 ** 6)\n"
        "    def forward(self, idx, adj):\n"
        f"        __import__('os').system('touch {marker}')\n"
        "        x = self.emb(idx)\n"
        "        x = torch.where(adj > 0, torch.spmm(adj, x), x)\n"
        "        return x @ self.emb.weight.T\n")
    proc = subprocess.run([sys.executable, "-m", "archcurator.tui.cli", "parse", str(src), "--entry", "M",
                           "--input", "6:int64", "--input", "6,6", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    import json
    nodes = {n["id"]: n for n in json.loads(proc.stdout)["nodes"]}
    assert nodes["emb"]["args"]["num_embeddings"] == 8
    assert any(n["op"] == "Where" for n in nodes.values())
    assert any(n["op"] == "Linear" and n.get("shares") == "emb" for n in nodes.values())


@pytest.mark.parametrize("body,exc", [
    ("assert dim % heads == 0, 'dim must divide by heads'", "AssertionError: dim must divide by heads"),
    ("assert not resize_positional_embedding, 'no name'", "NameError"),
])
def test_a_failing_assert_in_the_constructor_refuses_as_torch_would(tmp_path, body, exc):
    """A config check Python fails with the given --args (or an assert on a name defined nowhere:
    PyTorch-Pretrained-ViT's constructor) builds nothing in torch: the parser says so, one line."""
    src = tmp_path / "m.py"
    src.write_text("import torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self, dim=12, heads=5):\n"
                   "        super().__init__()\n"
                   f"        {body}\n"
                   "        self.fc = nn.Linear(dim, dim)\n"
                   "    def forward(self, x):\n"
                   "        return self.fc(x)\n")
    spec = importlib.util.spec_from_file_location(f"assert_{exc[:4]}", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises((AssertionError, NameError)):
        mod.M()
    with pytest.raises(ParseFailure) as e:
        parse_source(src, "M", inputs=[([2, 12], "float32")])
    assert f"m.py:5: building 'M' raises {exc}" in str(e.value)
    if "heads" in body:  # with arguments the assert holds for, it builds
        assert parse_source(src, "M", {"heads": 4}, [([2, 12], "float32")]).design["nodes"]


def test_cli_input_symbols_may_be_any_name_in_a_shape_of_several_sizes():
    from archcurator.core.parse import parse_input_spec

    assert parse_input_spec("batch,3,h,w") == (["batch", 3, "h", "w"], "float32")
    assert parse_input_spec("B:int64") == (["B"], "int64")


def test_an_einops_pattern_is_read_by_the_op_tables_tokeniser(tmp_path):
    """One einops grammar (core/ops/einsum.read_side): a token einops refuses as an axis name ('c-1',
    'c...') is said to be one; the parser's own split had read it as a name and said the pattern dropped
    an axis."""
    from archcurator.core.ops import einsum
    from archcurator.core.parse import einops_lib

    assert einops_lib.PatternError is einsum.PatternError
    for pattern, bad in (("b c-1 -> b", "c-1"), ("b c... -> b", "c...")):
        src = tmp_path / "m.py"
        src.write_text("import torch\nimport einops\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
                       "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 3)\n\n"
                       f"    def forward(self, x):\n        return self.fc(einops.rearrange(x, {pattern!r}))\n")
        r = parse_source(src, "M", {}, [([2, 3], "float32")])
        assert any(f"invalid axis {bad!r}" in w.message for w in r.warnings), [w.message for w in r.warnings]


@pytest.mark.parametrize("eq,shapes", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(6, 2, 3, 4), (2, 4, 5)]), ("bij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("...i->...", [(2, 3, 4)]), ("i,j", [(3,), (4,)]),
])
def test_torch_einsum_is_read_by_the_op_tables_equation_parser(tmp_path, eq, shapes):
    """torch.einsum's equation is read as the op table reads it: an implicit output puts the ellipsis dims
    first and ellipses of unequal width broadcast from the right (the parser's own reading had put them last
    and aligned them from the left); the built design computes what torch computes."""
    from archcurator.core.build import build_module
    from archcurator.core.graph import Design

    args = ", ".join(f"x{i}" for i in range(len(shapes)))
    src = tmp_path / "m.py"
    src.write_text(f"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, {args}):\n"
                   f"        return torch.einsum({eq!r}, {args})\n")
    r = parse_source(src, "M", {}, [(list(s), "float32") for s in shapes])
    xs = [torch.randn(s) for s in shapes]
    with torch.no_grad():
        y = build_module(Design.from_dict(r.design))(*xs)
    assert torch.allclose(y, torch.einsum(eq, *xs), atol=1e-5)
