"""The reference zoo agrees with PyTorch and with the published counts.

For every zoo architecture: the module `core.build` makes has exactly the
parameters our op table counts (and the published count where the reference
implementation publishes one); a forward on the meta device gives, at every
node, the shape our inference gives; and FlopCounterMode on the meta device
counts the forward FLOPs we count, within 1%.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archcurator.core.graph import Design
from archcurator.core.zoo import ZOO_NAMES, build_zoo, published_params
from archcurator.core.zoo.builder import GraphBuilder, ZooError, dumps

ROOT = Path(__file__).resolve().parents[1]
ARCH_DIR = ROOT / "assets" / "architectures"

# Published parameter counts (torchvision's weight tables; Hugging Face model cards / num_parameters()).
PUBLISHED_PARAMS = {
    "resnet18": 11_689_512,
    "resnet34": 21_797_672,
    "resnet50": 25_557_032,
    "resnet101": 44_549_160,
    "resnet152": 60_192_808,
    "resnext50_32x4d": 25_028_904,
    "resnext101_32x8d": 88_791_336,
    "wide_resnet50_2": 68_883_240,
    "wide_resnet101_2": 126_886_696,
    "vgg11": 132_863_336,
    "vgg11_bn": 132_868_840,
    "vgg13": 133_047_848,
    "vgg16": 138_357_544,
    "vgg16_bn": 138_365_992,
    "vgg19": 143_667_240,
    "alexnet": 61_100_840,
    "mobilenet_v2": 3_504_872,
    "mobilenet_v3_large": 5_483_032,
    "mobilenet_v3_small": 2_542_856,
    "efficientnet_b0": 5_288_548,
    "efficientnet_b1": 7_794_184,
    "densenet121": 7_978_856,
    "densenet161": 28_681_000,
    "densenet169": 14_149_480,
    "densenet201": 20_013_928,
    "squeezenet1_0": 1_248_424,
    "squeezenet1_1": 1_235_496,
    "shufflenet_v2_x0_5": 1_366_792,
    "shufflenet_v2_x1_0": 2_278_604,
    "mnasnet0_5": 2_218_512,
    "mnasnet1_0": 4_383_312,
    "convnext_tiny": 28_589_128,
    "convnext_small": 50_223_688,
    "vit_b_16": 86_567_656,
    "vit_b_32": 88_224_232,
    "vit_l_16": 304_326_632,
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "bert-base-uncased": 109_482_240,
    "distilbert-base-uncased": 66_362_880,
    "mixer_s16_224": 18_528_264,
    "mixer_b16_224": 59_880_472,
    "lenet5": 61_706,
    "mnist_cnn": 1_199_882,
}

# torchvision's GFLOPS column (it counts multiply-adds), at 224x224 (240x240 for efficientnet_b1).
PUBLISHED_GMACS = {
    "resnet18": 1.814, "resnet34": 3.664, "resnet50": 4.089, "resnet101": 7.801, "resnet152": 11.514,
    "resnext50_32x4d": 4.23, "resnext101_32x8d": 16.414, "wide_resnet50_2": 11.398,
    "wide_resnet101_2": 22.753, "vgg11": 7.609, "vgg11_bn": 7.609, "vgg13": 11.308, "vgg16": 15.47,
    "vgg16_bn": 15.47, "vgg19": 19.632, "alexnet": 0.714, "mobilenet_v2": 0.301,
    "mobilenet_v3_large": 0.217, "mobilenet_v3_small": 0.057, "efficientnet_b0": 0.386,
    "efficientnet_b1": 0.687, "densenet121": 2.834, "densenet161": 7.728, "densenet169": 3.36,
    "densenet201": 4.291, "squeezenet1_0": 0.819, "squeezenet1_1": 0.349, "mnasnet0_5": 0.104,
    "mnasnet1_0": 0.314, "convnext_tiny": 4.456, "convnext_small": 8.684, "vit_b_16": 17.564,
    "vit_b_32": 4.409, "vit_l_16": 61.555,
}

REQUIRED = [
    "lenet5", "alexnet", "vgg11", "vgg16", "resnet18", "resnet34", "resnet50", "resnet101",
    "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "densenet121", "efficientnet_b0",
    "squeezenet1_0", "squeezenet1_1", "convnext_tiny", "unet", "gpt2", "gpt2-medium",
    "bert-base-uncased", "vit_b_16", "transformer", "mixer_s16_224", "lstm_lm", "gru_lm",
    "mlp_autoencoder", "conv_autoencoder", "mlp_mnist", "tiny_cnn",
]


@pytest.fixture(scope="module")
def zoo() -> dict:
    return build_zoo()


# ---- the zoo as a whole ---------------------------------------------------

def test_zoo_has_at_least_48_designs():
    assert len(ZOO_NAMES) >= 48
    assert len(set(ZOO_NAMES)) == len(ZOO_NAMES)


def test_required_architectures_present():
    missing = [n for n in REQUIRED if n not in ZOO_NAMES]
    assert not missing


def test_generation_is_deterministic(zoo):
    again = build_zoo()
    for name in ZOO_NAMES:
        assert dumps(zoo[name]) == dumps(again[name]), name


def test_asset_files_match_the_generators(zoo):
    """`python -m archcurator.core.zoo` has been run: every file is what the code generates."""
    stale = [n for n in ZOO_NAMES
             if not (ARCH_DIR / f"{n}.json").exists()
             or (ARCH_DIR / f"{n}.json").read_text(encoding="utf-8") != dumps(zoo[n])]
    assert not stale, f"run `python -m archcurator.core.zoo` to regenerate: {stale}"
    extra = sorted(p.stem for p in ARCH_DIR.glob("*.json") if p.stem not in zoo)
    assert not extra, f"files the zoo does not generate: {extra}"


def test_check_mode_reports_nothing_stale():
    from archcurator.core.zoo.__main__ import main

    assert main(["--check"]) == 0


def test_file_name_is_design_name(zoo):
    for name, design in zoo.items():
        assert design["name"] == name
        assert design["format"] == "archgraph/1"


def test_published_counts_recorded_in_meta(zoo):
    for name, count in PUBLISHED_PARAMS.items():
        assert published_params(zoo[name]) == count, name


def test_builder_refuses_bad_graphs():
    b = GraphBuilder("t")
    x = b.input("x", ["B", 4])
    b.node("fc", "Linear", x, in_features=4, out_features=2)
    with pytest.raises(ZooError):
        b.node("fc", "ReLU", "fc")
    with pytest.raises(ZooError):
        b.node("y", "ReLU", "nope")
    with pytest.raises(ZooError):
        b.node("z", "Linear", x, shares="nope", in_features=4, out_features=2)
    assert b.fresh("relu") == "relu" and b.fresh("relu") == "relu_1"


def test_gpt2_head_is_tied_and_vit_tokens_are_parameters(zoo):
    gpt2 = {n["id"]: n for n in zoo["gpt2"]["nodes"]}
    assert gpt2["lm_head"]["shares"] == "transformer.wte"
    assert gpt2["lm_head"]["args"] == {"in_features": 768, "out_features": 50257, "bias": False}
    assert any(n["op"] == "Scale" for n in zoo["gpt2"]["nodes"])
    vit = {n["id"]: n for n in zoo["vit_b_16"]["nodes"]}
    assert vit["class_token"]["op"] == "Parameter" and vit["class_token"]["args"]["shape"] == [1, 1, 768]
    assert vit["encoder.pos_embedding"]["args"]["shape"] == [1, 197, 768]


# ---- per architecture: loads, verifies, builds, agrees with torch ------------

@pytest.mark.parametrize("name", ZOO_NAMES)
def test_design_round_trips(name, zoo):
    text = (ARCH_DIR / f"{name}.json").read_text(encoding="utf-8")
    design = Design.from_json(text, source=f"{name}.json")
    assert design.structural_problems() == []
    assert design.to_dict() == json.loads(text)


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO_NAMES)
def test_zoo_agrees_with_torch(name, zoo):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from archcurator.core import dims as D
    from archcurator.core.build import build_module, example_inputs
    from archcurator.core.cost import cost_env
    from archcurator.core.verify import verify_graph

    design = Design.from_dict(zoo[name], source=f"{name}.json")
    report = verify_graph(design)
    blocks = [f for f in report.findings if f.severity == "block"]
    assert not blocks, [f"{f.rule}: {f.message}" for f in blocks]
    ours = report.cost["params"]
    if name in PUBLISHED_PARAMS:
        assert ours == PUBLISHED_PARAMS[name]

    env, _ = cost_env(design, 1)
    with torch.device("meta"):
        module = build_module(design, device="meta", sizes=env)
        assert sum(p.numel() for p in module.parameters()) == ours
        inputs = example_inputs(design, batch=1, device="meta", env=env)
        with FlopCounterMode(display=False) as counter:
            results = module.forward_all(*inputs)

    mismatches = []
    for node_id, values in results.items():
        types = report.types.get(node_id)
        if types is None:
            continue
        for i, value in enumerate(values):
            if not isinstance(value, torch.Tensor) or i >= len(types):
                continue
            shape = types[i].shape
            want = None if shape is None else [D.substitute(s, env) for s in shape]
            if want != list(value.shape):
                mismatches.append(f"{node_id}:{i} torch {list(value.shape)} ours {want}")
    assert not mismatches, mismatches[:5]

    torch_flops = counter.get_total_flops()
    our_flops = report.cost["flops_per_sample"]
    assert our_flops == pytest.approx(torch_flops, rel=0.01)
    if name in PUBLISHED_GMACS:
        # the column is given to 3 significant decimals (or 2): agree to its last digit
        pub = PUBLISHED_GMACS[name]
        assert abs(our_flops / 2e9 - pub) <= 0.0011, (our_flops / 2e9, pub)


@pytest.mark.parametrize("name", [n for n in ZOO_NAMES
                                  if n in ("tiny_cnn", "resnet20_cifar", "vit_b_32", "gpt-nano",
                                           "seq2seq_gru", "transformer", "mixer_s16_224")])
def test_batch_of_two_forwards(name, zoo):
    """The batch symbol is a real batch: two samples run as well as one."""
    import torch

    from archcurator.core.build import build_module, example_inputs

    design = Design.from_dict(zoo[name])
    with torch.device("meta"):
        module = build_module(design, device="meta")
        out = module(*example_inputs(design, batch=2, device="meta"))
    outs = out if isinstance(out, tuple) else (out,)
    assert all(o.shape[0] == 2 for o in outs)


def test_gpt_attention_is_causal(zoo):
    """Changing a later token leaves every earlier position's logits alone."""
    import torch

    from archcurator.core.build import build_module, example_inputs

    design = Design.from_dict(zoo["gpt-nano"])
    torch.manual_seed(0)
    module = build_module(design)
    module.eval()
    (ids,) = example_inputs(design, batch=1)
    changed = ids.clone()
    changed[0, 100] = (changed[0, 100] + 1) % 65
    with torch.no_grad():
        a, b = module(ids), module(changed)
    assert torch.allclose(a[0, :100], b[0, :100], atol=1e-5)
    assert not torch.allclose(a[0, 100:], b[0, 100:])
