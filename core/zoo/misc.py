"""Small and miscellaneous designs: MLPs, autoencoders, a VAE encoder, U-Net
and a text CNN."""

from __future__ import annotations

from .builder import GraphBuilder, bn, conv, linear
from .common import MNIST, RECON, SEGMENT, lm_train, meta

_M = "misc"


def linear_classifier() -> dict:
    b = GraphBuilder("linear_classifier", train=MNIST,
                     meta=meta("mlp", "multinomial logistic regression on MNIST", module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc", x, 784, 10)
    b.output(x)
    return b.design()


def mlp_mnist() -> dict:
    b = GraphBuilder("mlp_mnist", train=MNIST,
                     meta=meta("mlp", "three-layer MLP on MNIST with dropout", module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    x = b.node("flatten", "Flatten", x, start_dim=1)
    x = linear(b, "fc1", x, 784, 512)
    x = b.node("relu", "ReLU", x)
    x = b.node("dropout", "Dropout", x, p=0.2)
    x = linear(b, "fc2", x, 512, 256)
    x = b.node("relu_1", "ReLU", x)
    x = b.node("dropout_1", "Dropout", x, p=0.2)
    x = linear(b, "fc3", x, 256, 10)
    b.output(x)
    return b.design()


def mlp_tabular() -> dict:
    b = GraphBuilder("mlp_tabular", train={"loss": "mse", "batch_size": 256, "steps": 5_000},
                     meta=meta("mlp", "small regression MLP on 32 tabular features", module=_M))
    x = b.input("x", ["B", 32])
    x = linear(b, "net.0", x, 32, 64)
    x = b.node("net.1", "ReLU", x)
    x = linear(b, "net.2", x, 64, 64)
    x = b.node("net.3", "ReLU", x)
    x = linear(b, "net.4", x, 64, 1)
    b.output(x)
    return b.design()


def mlp_autoencoder() -> dict:
    b = GraphBuilder("mlp_autoencoder", train=RECON,
                     meta=meta("autoencoder", "fully connected MNIST autoencoder, 32-d code",
                               module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    h = b.node("flatten", "Flatten", x, start_dim=1)
    h = linear(b, "encoder.0", h, 784, 256)
    h = b.node("encoder.1", "ReLU", h)
    h = linear(b, "encoder.2", h, 256, 64)
    h = b.node("encoder.3", "ReLU", h)
    h = linear(b, "encoder.4", h, 64, 32)
    h = b.node("encoder.5", "ReLU", h)
    h = linear(b, "decoder.0", h, 32, 64)
    h = b.node("decoder.1", "ReLU", h)
    h = linear(b, "decoder.2", h, 64, 256)
    h = b.node("decoder.3", "ReLU", h)
    h = linear(b, "decoder.4", h, 256, 784)
    h = b.node("decoder.5", "Sigmoid", h)
    h = b.node("unflatten", "Unflatten", h, dim=1, unflattened_size=[1, 28, 28])
    b.output(h)
    return b.design()


def conv_autoencoder() -> dict:
    b = GraphBuilder("conv_autoencoder", train=RECON,
                     meta=meta("autoencoder", "convolutional MNIST autoencoder "
                                              "(strided convs, transposed-conv decoder)", module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    h = conv(b, "encoder.0", x, 1, 16, 3, 2, 1)
    h = b.node("encoder.1", "ReLU", h)
    h = conv(b, "encoder.2", h, 16, 32, 3, 2, 1)
    h = b.node("encoder.3", "ReLU", h)
    h = conv(b, "encoder.4", h, 32, 64, 7)
    h = b.node("decoder.0", "ConvTranspose2d", h, in_channels=64, out_channels=32, kernel_size=7)
    h = b.node("decoder.1", "ReLU", h)
    h = b.node("decoder.2", "ConvTranspose2d", h, in_channels=32, out_channels=16, kernel_size=3,
               stride=2, padding=1, output_padding=1)
    h = b.node("decoder.3", "ReLU", h)
    h = b.node("decoder.4", "ConvTranspose2d", h, in_channels=16, out_channels=1, kernel_size=3,
               stride=2, padding=1, output_padding=1)
    h = b.node("decoder.5", "Sigmoid", h)
    b.output(h)
    return b.design()


def vae_encoder() -> dict:
    """pytorch/examples vae: the encoder half (fc1 -> ReLU -> fc21 mu, fc22 logvar)."""
    b = GraphBuilder("vae_encoder", train=RECON,
                     meta=meta("autoencoder", "pytorch/examples vae/main.py VAE.encode",
                               module=_M))
    x = b.input("x", ["B", 1, 28, 28])
    h = b.node("flatten", "Flatten", x, start_dim=1)
    h = linear(b, "fc1", h, 784, 400)
    h = b.node("relu", "ReLU", h)
    mu = linear(b, "fc21", h, 400, 20)
    logvar = linear(b, "fc22", h, 400, 20)
    b.output(mu, logvar)
    return b.design()


def _double_conv(b: GraphBuilder, p: str, x: str, cin: int, cout: int) -> str:
    x = conv(b, f"{p}.double_conv.0", x, cin, cout, 3, 1, 1, bias=False)
    x = bn(b, f"{p}.double_conv.1", x, cout)
    x = b.node(f"{p}.double_conv.2", "ReLU", x)
    x = conv(b, f"{p}.double_conv.3", x, cout, cout, 3, 1, 1, bias=False)
    x = bn(b, f"{p}.double_conv.4", x, cout)
    return b.node(f"{p}.double_conv.5", "ReLU", x)


def unet() -> dict:
    """milesial/Pytorch-UNet UNet(n_channels=3, n_classes=2, bilinear=False)."""
    b = GraphBuilder("unet", train=SEGMENT,
                     meta=meta("unet", "milesial/Pytorch-UNet UNet(3, 2, bilinear=False)",
                               module=_M,
                               note="the F.pad that aligns odd sizes is a no-op at 224x224 "
                                    "and is left out"))
    x = b.input("x", ["B", 3, 224, 224])
    x1 = _double_conv(b, "inc", x, 3, 64)
    skips = [x1]
    h, c = x1, 64
    for i in range(1, 5):
        h = b.node(f"down{i}.maxpool_conv.0", "MaxPool2d", h, kernel_size=2)
        h = _double_conv(b, f"down{i}.maxpool_conv.1", h, c, 2 * c)
        c *= 2
        skips.append(h)
    for i in range(1, 5):
        skip = skips[4 - i]
        h = b.node(f"up{i}.up", "ConvTranspose2d", h, in_channels=c, out_channels=c // 2,
                   kernel_size=2, stride=2)
        h = b.node(f"up{i}.cat", "Concat", [skip, h], dim=1)
        h = _double_conv(b, f"up{i}.conv", h, c, c // 2)
        c //= 2
    h = conv(b, "outc.conv", h, 64, 2, 1)
    b.output(h)
    return b.design()


def text_cnn() -> dict:
    """Kim 2014 sentence CNN: filters of width 3, 4, 5 (100 each), max over time."""
    vocab, emb = 20000, 300
    b = GraphBuilder("text_cnn", train=lm_train(64, vocab, batch=50, steps=10_000),
                     meta=meta("text-cnn", "Kim 2014, CNN-rand for sentence classification",
                               module=_M))
    ids = b.input("input_ids", ["B", "T"], "int64")
    e = b.node("embedding", "Embedding", ids, num_embeddings=vocab, embedding_dim=emb)
    e = b.node("transpose", "Transpose", e, dim0=1, dim1=2)
    feats = []
    for i, k in enumerate((3, 4, 5)):
        h = conv(b, f"convs.{i}", e, emb, 100, k, op="Conv1d")
        h = b.node(f"relu_{i}" if i else "relu", "ReLU", h)
        h = b.node(f"max_pool_{i}" if i else "max_pool", "AdaptiveMaxPool1d", h, output_size=1)
        h = b.node(f"flatten_{i}" if i else "flatten", "Flatten", h, start_dim=1)
        feats.append(h)
    x = b.node("cat", "Concat", feats, dim=1)
    x = b.node("dropout", "Dropout", x, p=0.5)
    x = linear(b, "fc", x, 300, 2)
    b.output(x)
    return b.design()


def builders() -> dict:
    return {
        "linear_classifier": linear_classifier,
        "mlp_mnist": mlp_mnist,
        "mlp_tabular": mlp_tabular,
        "mlp_autoencoder": mlp_autoencoder,
        "conv_autoencoder": conv_autoencoder,
        "vae_encoder": vae_encoder,
        "unet": unet,
        "text_cnn": text_cnn,
    }
