"""The real-world parser corpus: which public files, which entry, which arguments.

Each entry names a model file kept as it is in its repository (with the sibling
files it imports), the class or builder to read, its keyword arguments and its
forward inputs.  `bench/corpus_make.py` copies the files from public snapshots
and records the truth (unique parameter count and output shapes, from building
and running each entry in real torch in a separate process) in
`bench/corpus/manifest.json`; `bench/parse_real.py` measures the parser on it.

`namespace` names the arguments that the model reads as an attribute namespace
(a config object: `config.n_embd`); the truth run passes them as
`types.SimpleNamespace`, the parser as a dict (its namespace reading).  `tuples`
names the list arguments that the code wants as tuples (JSON has no tuple).
"""

from __future__ import annotations

# repo -> (licence, files and folders to copy, relative to the repository root)
SOURCES = {
    "karpathy/nanoGPT": ("MIT", ["model.py"]),
    "karpathy/minGPT": ("MIT", ["mingpt/model.py", "mingpt/utils.py", "mingpt/__init__.py"]),
    "karpathy/llama2.c": ("MIT", ["model.py"]),
    "lucidrains/vit-pytorch": ("MIT", [
        "vit_pytorch/vit.py", "vit_pytorch/simple_vit.py", "vit_pytorch/cait.py", "vit_pytorch/deepvit.py",
        "vit_pytorch/cross_vit.py", "vit_pytorch/t2t.py", "vit_pytorch/cct.py", "vit_pytorch/levit.py",
        "vit_pytorch/pit.py", "vit_pytorch/mobile_vit.py", "vit_pytorch/vit_for_small_dataset.py",
        "vit_pytorch/local_vit.py", "vit_pytorch/cvt.py", "vit_pytorch/vit_1d.py", "vit_pytorch/max_vit.py",
        "vit_pytorch/nest.py", "vit_pytorch/vit_3d.py", "vit_pytorch/parallel_vit.py",
        "vit_pytorch/simple_vit_with_register_tokens.py", "vit_pytorch/twins_svt.py"]),
    "lucidrains/denoising-diffusion-pytorch": ("MIT", [
        "denoising_diffusion_pytorch/karras_unet.py", "denoising_diffusion_pytorch/attend.py"]),
    "pytorch/examples": ("BSD-3-Clause", [
        "mnist/main.py", "word_language_model/model.py", "super_resolution/model.py",
        "fast_neural_style/neural_style/transformer_net.py", "mnist_rnn/main.py",
        "language_translation/src/model.py"]),
    "kuangliu/pytorch-cifar": ("MIT", [
        "models/dla.py", "models/dpn.py", "models/pnasnet.py", "models/regnet.py", "models/senet.py",
        "models/shufflenetv2.py", "models/efficientnet.py", "models/googlenet.py", "models/lenet.py",
        "models/preact_resnet.py", "models/mobilenetv2.py", "models/densenet.py"]),
    "AntixK/PyTorch-VAE": ("Apache-2.0", ["models/"]),
    "eriklindernoren/PyTorch-GAN": ("MIT", [
        "implementations/cyclegan/models.py", "implementations/pix2pix/models.py",
        "implementations/stargan/models.py", "implementations/context_encoder/models.py",
        "implementations/dualgan/models.py"]),
    "locuslab/TCN": ("MIT", ["TCN/tcn.py"]),
    "jik876/hifi-gan": ("MIT", ["models.py", "utils.py"]),
    "rosinality/vq-vae-2-pytorch": ("MIT", ["vqvae.py", "distributed/"]),
    "openai/CLIP": ("MIT", ["clip/model.py"]),
    "jadore801120/attention-is-all-you-need-pytorch": ("MIT", [
        "transformer/Models.py", "transformer/Layers.py", "transformer/SubLayers.py", "transformer/Modules.py",
        "transformer/Constants.py", "transformer/__init__.py", "transformer/Optim.py",
        "transformer/Translator.py"]),
    "jvanvugt/pytorch-unet": ("MIT", ["unet.py"]),
    "openai/guided-diffusion": ("MIT", ["guided_diffusion/unet.py", "guided_diffusion/nn.py",
                                        "guided_diffusion/fp16_util.py", "guided_diffusion/logger.py"]),
    "xinntao/ESRGAN": ("Apache-2.0", ["RRDBNet_arch.py"]),
    "Megvii-BaseDetection/YOLOX": ("Apache-2.0", ["yolox/models/darknet.py", "yolox/models/network_blocks.py",
                                                  "yolox/models/yolo_pafpn.py"]),
    "lukemelas/EfficientNet-PyTorch": ("Apache-2.0", ["efficientnet_pytorch/model.py",
                                                      "efficientnet_pytorch/utils.py"]),
}

IMG = "2,3,32,32"


def E(repo, file, entry, args=None, inputs=(IMG,), namespace=(), note="", tuples=()):
    return {"repo": repo, "file": file, "entry": entry, "args": args or {}, "inputs": list(inputs),
            "namespace": list(namespace), "tuples": list(tuples), "note": note}


_VIT = dict(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128)
_GPT2 = {"block_size": 32, "vocab_size": 100, "n_layer": 2, "n_head": 4, "n_embd": 64, "dropout": 0.0,
         "bias": True}
_HIFI = {"resblock": "1", "upsample_rates": [8, 8, 2, 2], "upsample_kernel_sizes": [16, 16, 4, 4],
         "upsample_initial_channel": 64, "resblock_kernel_sizes": [3, 7, 11],
         "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]], "num_mels": 80}

ENTRIES = [
    # ---- language models
    E("karpathy/nanoGPT", "model.py", "GPT", {"config": _GPT2}, ["2,16:int64"], ["config"]),
    E("karpathy/minGPT", "mingpt/model.py", "GPT",
      {"config": {"model_type": None, "n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 100,
                  "block_size": 32, "embd_pdrop": 0.1, "resid_pdrop": 0.1, "attn_pdrop": 0.1}},
      ["2,16:int64"], ["config"]),
    E("karpathy/llama2.c", "model.py", "Transformer",
      {"params": {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 100, "hidden_dim": None,
                  "multiple_of": 32, "norm_eps": 1e-5, "max_seq_len": 32, "dropout": 0.0}},
      ["2,16:int64"], ["params"]),
    E("pytorch/examples", "word_language_model/model.py", "RNNModel",
      {"rnn_type": "GRU", "ntoken": 100, "ninp": 32, "nhid": 32, "nlayers": 2, "tie_weights": True},
      ["12,2:int64", "2,2,32"]),
    E("pytorch/examples", "word_language_model/model.py", "TransformerModel",
      {"ntoken": 100, "ninp": 32, "nhead": 4, "nhid": 64, "nlayers": 2}, ["12,2:int64"]),
    E("pytorch/examples", "language_translation/src/model.py", "Translator",
      {"num_encoder_layers": 2, "num_decoder_layers": 2, "embed_size": 32, "num_heads": 4,
       "src_vocab_size": 100, "tgt_vocab_size": 90, "dim_feedforward": 64, "dropout": 0.1},
      ["10,2:int64", "9,2:int64", "10,10", "9,9", "2,10:bool", "2,9:bool", "2,10:bool"]),
    E("jadore801120/attention-is-all-you-need-pytorch", "transformer/Models.py", "Transformer",
      {"n_src_vocab": 100, "n_trg_vocab": 90, "src_pad_idx": 0, "trg_pad_idx": 0, "d_word_vec": 32, "d_model": 32,
       "d_inner": 64, "n_layers": 2, "n_head": 4, "d_k": 8, "d_v": 8, "n_position": 50},
      ["2,10:int64", "2,9:int64"]),
    E("openai/CLIP", "clip/model.py", "CLIP",
      {"embed_dim": 32, "image_resolution": 32, "vision_layers": 2, "vision_width": 64, "vision_patch_size": 8,
       "context_length": 16, "vocab_size": 100, "transformer_width": 32, "transformer_heads": 4,
       "transformer_layers": 2}, ["2,3,32,32", "2,16:int64"]),
    E("openai/CLIP", "clip/model.py", "CLIP",
      {"embed_dim": 32, "image_resolution": 64, "vision_layers": [1, 1, 1, 1], "vision_width": 16,
       "vision_patch_size": None, "context_length": 16, "vocab_size": 100, "transformer_width": 32,
       "transformer_heads": 4, "transformer_layers": 1}, ["2,3,64,64", "2,16:int64"], note="ModifiedResNet"),
    # ---- ViT variants written with einops
    E("lucidrains/vit-pytorch", "vit_pytorch/vit.py", "ViT", dict(_VIT)),
    E("lucidrains/vit-pytorch", "vit_pytorch/simple_vit.py", "SimpleViT", dict(_VIT)),
    E("lucidrains/vit-pytorch", "vit_pytorch/cait.py", "CaiT", dict(_VIT, cls_depth=1)),
    E("lucidrains/vit-pytorch", "vit_pytorch/deepvit.py", "DeepViT", dict(_VIT)),
    E("lucidrains/vit-pytorch", "vit_pytorch/cross_vit.py", "CrossViT",
      {"image_size": 32, "num_classes": 10, "sm_dim": 32, "lg_dim": 64, "sm_patch_size": 8, "sm_enc_depth": 1,
       "sm_enc_heads": 2, "sm_enc_mlp_dim": 64, "lg_patch_size": 16, "lg_enc_depth": 1, "lg_enc_heads": 2,
       "lg_enc_mlp_dim": 64, "cross_attn_depth": 1, "cross_attn_heads": 2, "depth": 1}),
    E("lucidrains/vit-pytorch", "vit_pytorch/t2t.py", "T2TViT",
      {"image_size": 32, "num_classes": 10, "dim": 64, "depth": 2, "heads": 4, "mlp_dim": 128,
       "t2t_layers": [[7, 4], [3, 2], [3, 2]]}),
    E("lucidrains/vit-pytorch", "vit_pytorch/cct.py", "cct_2",
      {"img_size": 32, "n_conv_layers": 1, "kernel_size": 3, "stride": 2, "padding": 1, "pooling_kernel_size": 3,
       "pooling_stride": 2, "pooling_padding": 1, "num_classes": 10, "positional_embedding": "learnable"}),
    E("lucidrains/vit-pytorch", "vit_pytorch/levit.py", "LeViT",
      {"image_size": 32, "num_classes": 10, "stages": 2, "dim": [32, 64], "depth": 1, "heads": [2, 4],
       "mlp_mult": 2, "dropout": 0.0}, tuples=["dim", "heads"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/pit.py", "PiT",
      {"image_size": 32, "patch_size": 4, "dim": 32, "num_classes": 10, "depth": [1, 1], "heads": 2,
       "mlp_dim": 64}, tuples=["depth"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/mobile_vit.py", "MobileViT",
      {"image_size": [64, 64], "dims": [32, 32, 48], "channels": [8, 16, 24, 24, 32, 32, 48, 48, 64, 64, 96],
       "num_classes": 10}, ["2,3,64,64"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/vit_for_small_dataset.py", "ViT", dict(_VIT)),
    E("lucidrains/vit-pytorch", "vit_pytorch/vit_1d.py", "ViT",
      {"seq_len": 64, "patch_size": 8, "num_classes": 10, "dim": 32, "depth": 2, "heads": 4, "mlp_dim": 64},
      ["2,3,64"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/max_vit.py", "MaxViT",
      {"num_classes": 10, "dim": 32, "depth": [1, 1], "dim_head": 16, "dim_conv_stem": 16, "window_size": 4},
      ["2,3,64,64"], tuples=["depth"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/nest.py", "NesT",
      {"image_size": 32, "patch_size": 4, "num_classes": 10, "dim": 32, "heads": 2, "num_hierarchies": 2,
       "block_repeats": [1, 1]}, tuples=["block_repeats"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/vit_3d.py", "ViT",
      {"image_size": 32, "image_patch_size": 8, "frames": 4, "frame_patch_size": 2, "num_classes": 10, "dim": 32,
       "depth": 1, "heads": 2, "mlp_dim": 64}, ["2,3,4,32,32"]),
    E("lucidrains/vit-pytorch", "vit_pytorch/parallel_vit.py", "ViT", dict(_VIT)),
    E("lucidrains/vit-pytorch", "vit_pytorch/simple_vit_with_register_tokens.py", "SimpleViT",
      dict(_VIT, num_register_tokens=2)),
    E("lucidrains/vit-pytorch", "vit_pytorch/cvt.py", "CvT",
      {"num_classes": 10, "s1_emb_dim": 16, "s2_emb_dim": 32, "s3_emb_dim": 48, "s1_depth": 1, "s2_depth": 1,
       "s3_depth": 1, "s1_heads": 1, "s2_heads": 2, "s3_heads": 2}),
    E("lucidrains/vit-pytorch", "vit_pytorch/twins_svt.py", "TwinsSVT",
      {"num_classes": 10, "s1_emb_dim": 16, "s2_emb_dim": 32, "s3_emb_dim": 48, "s4_emb_dim": 64,
       "s1_local_patch_size": 2, "s2_local_patch_size": 2, "s3_local_patch_size": 1, "s4_local_patch_size": 1,
       "s1_global_k": 2, "s2_global_k": 2, "s3_global_k": 1, "s4_global_k": 1},
      ["2,3,64,64"]),
    # ---- classic CNNs (CIFAR)
    E("kuangliu/pytorch-cifar", "models/dla.py", "DLA"),
    E("kuangliu/pytorch-cifar", "models/dpn.py", "DPN26"),
    E("kuangliu/pytorch-cifar", "models/pnasnet.py", "PNASNetA"),
    E("kuangliu/pytorch-cifar", "models/regnet.py", "RegNetX_200MF"),
    E("kuangliu/pytorch-cifar", "models/senet.py", "SENet18"),
    E("kuangliu/pytorch-cifar", "models/shufflenetv2.py", "ShuffleNetV2", {"net_size": 0.5}),
    E("kuangliu/pytorch-cifar", "models/efficientnet.py", "EfficientNetB0"),
    E("kuangliu/pytorch-cifar", "models/googlenet.py", "GoogLeNet"),
    E("kuangliu/pytorch-cifar", "models/lenet.py", "LeNet"),
    E("kuangliu/pytorch-cifar", "models/preact_resnet.py", "PreActResNet18"),
    E("kuangliu/pytorch-cifar", "models/mobilenetv2.py", "MobileNetV2"),
    E("kuangliu/pytorch-cifar", "models/densenet.py", "densenet_cifar"),
    E("lukemelas/EfficientNet-PyTorch", "efficientnet_pytorch/model.py", "EfficientNet.from_name",
      {"model_name": "efficientnet-b0", "num_classes": 10, "image_size": 64}, ["2,3,64,64"]),
    # ---- pytorch/examples
    E("pytorch/examples", "mnist/main.py", "Net", inputs=["2,1,28,28"]),
    E("pytorch/examples", "mnist_rnn/main.py", "Net", inputs=["2,1,28,28"]),
    E("pytorch/examples", "super_resolution/model.py", "Net", {"upscale_factor": 3}, ["2,1,16,16"]),
    E("pytorch/examples", "fast_neural_style/neural_style/transformer_net.py", "TransformerNet"),
    # ---- U-Nets, diffusion U-Nets, VAEs, VQ-VAEs, GANs
    E("jvanvugt/pytorch-unet", "unet.py", "UNet",
      {"in_channels": 3, "n_classes": 2, "depth": 3, "wf": 4, "padding": True, "batch_norm": True,
       "up_mode": "upconv"}),
    E("jvanvugt/pytorch-unet", "unet.py", "UNet",
      {"in_channels": 1, "n_classes": 2, "depth": 2, "wf": 3, "padding": False, "up_mode": "upsample"},
      ["2,1,64,64"], note="unpadded"),
    E("openai/guided-diffusion", "guided_diffusion/unet.py", "UNetModel",
      {"image_size": 32, "in_channels": 3, "model_channels": 32, "out_channels": 3, "num_res_blocks": 1,
       "attention_resolutions": [2], "channel_mult": [1, 2], "num_heads": 2},
      ["2,3,32,32", "2:int64"]),
    E("lucidrains/denoising-diffusion-pytorch", "denoising_diffusion_pytorch/karras_unet.py", "KarrasUnet",
      {"image_size": 32, "dim": 16, "dim_max": 64, "num_downsamples": 2, "num_blocks_per_stage": 1,
       "attn_res": [8], "channels": 3}, ["2,3,32,32", "2"], tuples=["attn_res"]),
    E("AntixK/PyTorch-VAE", "models/vanilla_vae.py", "VanillaVAE", {"in_channels": 3, "latent_dim": 16},
      ["2,3,64,64"]),
    E("AntixK/PyTorch-VAE", "models/beta_vae.py", "BetaVAE", {"in_channels": 3, "latent_dim": 16},
      ["2,3,64,64"]),
    E("AntixK/PyTorch-VAE", "models/vq_vae.py", "VQVAE", {"in_channels": 3, "embedding_dim": 16,
                                                          "num_embeddings": 32, "hidden_dims": [16, 32]},
      ["2,3,64,64"]),
    E("AntixK/PyTorch-VAE", "models/info_vae.py", "InfoVAE", {"in_channels": 3, "latent_dim": 16},
      ["2,3,64,64"]),
    E("AntixK/PyTorch-VAE", "models/wae_mmd.py", "WAE_MMD", {"in_channels": 3, "latent_dim": 16},
      ["2,3,64,64"]),
    E("rosinality/vq-vae-2-pytorch", "vqvae.py", "VQVAE",
      {"channel": 32, "n_res_block": 1, "n_res_channel": 8, "embed_dim": 16, "n_embed": 64}),
    E("eriklindernoren/PyTorch-GAN", "implementations/cyclegan/models.py", "GeneratorResNet",
      {"input_shape": [3, 32, 32], "num_residual_blocks": 2}),
    E("eriklindernoren/PyTorch-GAN", "implementations/cyclegan/models.py", "Discriminator",
      {"input_shape": [3, 32, 32]}),
    E("eriklindernoren/PyTorch-GAN", "implementations/pix2pix/models.py", "GeneratorUNet", inputs=["2,3,256,256"]),
    E("eriklindernoren/PyTorch-GAN", "implementations/pix2pix/models.py", "Discriminator",
      inputs=["2,3,64,64", "2,3,64,64"]),
    E("eriklindernoren/PyTorch-GAN", "implementations/stargan/models.py", "GeneratorResNet",
      {"img_shape": [3, 32, 32], "res_blocks": 2, "c_dim": 5}, ["2,3,32,32", "2,5"]),
    E("eriklindernoren/PyTorch-GAN", "implementations/context_encoder/models.py", "Generator",
      inputs=["2,3,64,64"]),
    E("eriklindernoren/PyTorch-GAN", "implementations/dualgan/models.py", "Generator", inputs=["2,3,256,256"]),
    # ---- super-resolution, audio, TCN, detection backbones
    E("xinntao/ESRGAN", "RRDBNet_arch.py", "RRDBNet", {"in_nc": 3, "out_nc": 3, "nf": 16, "nb": 2, "gc": 8},
      ["2,3,16,16"]),
    E("jik876/hifi-gan", "models.py", "Generator", {"h": _HIFI}, ["2,80,8"], ["h"]),
    E("jik876/hifi-gan", "models.py", "MultiPeriodDiscriminator", inputs=["2,1,300", "2,1,300"]),
    E("jik876/hifi-gan", "models.py", "MultiScaleDiscriminator", inputs=["2,1,300", "2,1,300"]),
    E("locuslab/TCN", "TCN/tcn.py", "TemporalConvNet", {"num_inputs": 4, "num_channels": [8, 8, 8]}, ["2,4,50"]),
    E("Megvii-BaseDetection/YOLOX", "yolox/models/darknet.py", "CSPDarknet",
      {"dep_mul": 0.33, "wid_mul": 0.25}, ["2,3,64,64"]),
    E("Megvii-BaseDetection/YOLOX", "yolox/models/darknet.py", "Darknet", {"depth": 21}, ["2,3,64,64"]),
    E("Megvii-BaseDetection/YOLOX", "yolox/models/yolo_pafpn.py", "YOLOPAFPN",
      {"depth": 0.33, "width": 0.25}, ["2,3,64,64"]),
]

# ---- installed packages, fetched by pinned version at bench time (never stored here: the parser
# reads them from the unpacked wheel, as it would from site-packages).  repo -> (licence, pip pin)
PACKAGES = {
    "huggingface/pytorch-image-models": ("Apache-2.0", "timm==1.0.31"),
    "huggingface/transformers": ("Apache-2.0", "transformers==5.23.0"),
}


def P(repo, file, entry, args=None, inputs=("2,3,224,224",), note=""):
    return dict(E(repo, file, entry, args, inputs, note=note), package=PACKAGES[repo][1])


_TIMM = "huggingface/pytorch-image-models"
_HF = "huggingface/transformers"
_HF_SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}
_DECODER = dict(_HF_SMALL, vocab_size=100, num_key_value_heads=2, use_cache=False)

PACKAGE_ENTRIES = [
    # timm's registered builders, as `timm.create_model(name)` runs them (build_model_with_cfg and
    # the pretrained-config registry included)
    P(_TIMM, "timm/models/resnet.py", "resnet18"),
    P(_TIMM, "timm/models/resnet.py", "resnet50"),
    P(_TIMM, "timm/models/resnet.py", "resnext50_32x4d"),
    P(_TIMM, "timm/models/resnet.py", "seresnet50"),
    P(_TIMM, "timm/models/convnext.py", "convnext_tiny"),
    P(_TIMM, "timm/models/efficientnet.py", "efficientnet_b0"),
    P(_TIMM, "timm/models/mobilenetv3.py", "mobilenetv3_large_100"),
    P(_TIMM, "timm/models/densenet.py", "densenet121"),
    P(_TIMM, "timm/models/vision_transformer.py", "vit_small_patch16_224"),
    P(_TIMM, "timm/models/vision_transformer.py", "vit_tiny_patch16_224"),
    P(_TIMM, "timm/models/regnet.py", "regnety_004"),
    P(_TIMM, "timm/models/mlp_mixer.py", "mixer_s16_224"),
    P(_TIMM, "timm/models/deit.py", "deit_tiny_patch16_224"),
    P(_TIMM, "timm/models/swin_transformer.py", "swin_tiny_patch4_window7_224"),
    P(_TIMM, "timm/models/resnet.py", "resnet34d"),
    P(_TIMM, "timm/models/efficientnet.py", "tf_efficientnet_b0"),
    P(_TIMM, "timm/models/cspnet.py", "cspdarknet53"),
    P(_TIMM, "timm/models/ghostnet.py", "ghostnet_100"),
    P(_TIMM, "timm/models/mobilenetv3.py", "mobilenetv3_small_100"),
    P(_TIMM, "timm/models/convnext.py", "convnext_atto"),
    P(_TIMM, "timm/models/vgg.py", "vgg11"),
    P(_TIMM, "timm/models/inception_v3.py", "inception_v3", inputs=["2,3,299,299"]),
    P(_TIMM, "timm/models/dla.py", "dla34"),
    P(_TIMM, "timm/models/rexnet.py", "rexnet_100"),
    P(_TIMM, "timm/models/byobnet.py", "repvgg_a0"),
    P(_TIMM, "timm/models/metaformer.py", "poolformer_s12"),
    P(_TIMM, "timm/models/efficientformer.py", "efficientformer_l1"),
    P(_TIMM, "timm/models/levit.py", "levit_128s"),
    P(_TIMM, "timm/models/mobilevit.py", "mobilevit_xxs", inputs=["2,3,256,256"]),
    P(_TIMM, "timm/models/beit.py", "beit_base_patch16_224"),
    P(_TIMM, "timm/models/xception.py", "legacy_xception", inputs=["2,3,299,299"]),
    # Hugging Face modeling files with their configuration classes: --args are the config's fields
    P(_HF, "transformers/models/bert/modeling_bert.py", "BertModel", dict(_HF_SMALL, vocab_size=100),
      ["2,16:int64"]),
    P(_HF, "transformers/models/gpt2/modeling_gpt2.py", "GPT2Model",
      {"n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100, "n_positions": 32, "use_cache": False},
      ["2,16:int64"]),
    P(_HF, "transformers/models/llama/modeling_llama.py", "LlamaModel",
      dict(_HF_SMALL, vocab_size=100, num_key_value_heads=2, use_cache=False), ["2,16:int64"]),
    P(_HF, "transformers/models/roberta/modeling_roberta.py", "RobertaModel", dict(_HF_SMALL, vocab_size=100),
      ["2,16:int64"]),
    P(_HF, "transformers/models/distilbert/modeling_distilbert.py", "DistilBertModel",
      {"dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128, "vocab_size": 100}, ["2,16:int64"]),
    P(_HF, "transformers/models/mistral/modeling_mistral.py", "MistralModel", _DECODER, ["2,16:int64"]),
    P(_HF, "transformers/models/qwen2/modeling_qwen2.py", "Qwen2Model", _DECODER, ["2,16:int64"]),
    P(_HF, "transformers/models/gemma/modeling_gemma.py", "GemmaModel", dict(_DECODER, head_dim=16),
      ["2,16:int64"]),
    P(_HF, "transformers/models/albert/modeling_albert.py", "AlbertModel",
      dict(_HF_SMALL, vocab_size=100, embedding_size=32), ["2,16:int64"]),
    P(_HF, "transformers/models/electra/modeling_electra.py", "ElectraModel",
      dict(_HF_SMALL, vocab_size=100, embedding_size=32), ["2,16:int64"]),
    P(_HF, "transformers/models/gpt_neox/modeling_gpt_neox.py", "GPTNeoXModel",
      dict(_HF_SMALL, vocab_size=100, use_cache=False), ["2,16:int64"]),
    P(_HF, "transformers/models/phi/modeling_phi.py", "PhiModel", dict(_HF_SMALL, vocab_size=100, use_cache=False),
      ["2,16:int64"]),
    P(_HF, "transformers/models/llama/modeling_llama.py", "LlamaForCausalLM", _DECODER, ["2,16:int64"]),
    P(_HF, "transformers/models/bert/modeling_bert.py", "BertForSequenceClassification",
      dict(_HF_SMALL, vocab_size=100), ["2,16:int64"]),
    P(_HF, "transformers/models/vit/modeling_vit.py", "ViTModel", dict(_HF_SMALL, image_size=32, patch_size=8),
      ["2,3,32,32"]),
    P(_HF, "transformers/models/convnext/modeling_convnext.py", "ConvNextModel",
      {"hidden_sizes": [16, 32, 64, 128], "depths": [1, 1, 2, 1]}, ["2,3,64,64"]),
    P(_HF, "transformers/models/resnet/modeling_resnet.py", "ResNetModel",
      {"hidden_sizes": [16, 32, 64, 128], "depths": [1, 1, 1, 1], "embedding_size": 16}, ["2,3,64,64"]),
    P(_HF, "transformers/models/wav2vec2/modeling_wav2vec2.py", "Wav2Vec2Model",
      dict(_HF_SMALL, conv_dim=[32, 32], conv_stride=[5, 2], conv_kernel=[10, 3], num_conv_pos_embeddings=16,
           num_conv_pos_embedding_groups=4), ["2,1600"]),
    P(_HF, "transformers/models/clip/modeling_clip.py", "CLIPVisionModel",
      dict(_HF_SMALL, image_size=32, patch_size=8), ["2,3,32,32"]),
]
