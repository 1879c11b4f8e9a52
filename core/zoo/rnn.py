"""Recurrent networks: word- and character-level language models and an
attentional GRU sequence-to-sequence model."""

from __future__ import annotations

from .builder import GraphBuilder, linear
from .common import lm_train, meta

_M = "rnn"


def rnn_lm(name: str, cell: str, vocab: int, emb: int, hidden: int, layers: int, *,
           dropout: float, seq_len: int, origin: str, batch: int = 20) -> dict:
    """pytorch/examples word_language_model RNNModel: encoder, drop, rnn, drop, decoder."""
    b = GraphBuilder(name, train=lm_train(seq_len, vocab, batch=batch, steps=50_000),
                     meta=meta("rnn-lm", origin, module=_M))
    ids = b.input("input_ids", ["B", "T"], "int64")
    x = b.node("encoder", "Embedding", ids, num_embeddings=vocab, embedding_dim=emb)
    x = b.node("drop", "Dropout", x, p=dropout)
    r = b.node("rnn", cell, x, input_size=emb, hidden_size=hidden, num_layers=layers,
               batch_first=True, dropout=dropout if layers > 1 else 0.0)
    x = b.node("drop_1", "Dropout", f"{r}:0", p=dropout)
    x = linear(b, "decoder", x, hidden, vocab)
    b.output(x)
    return b.design()


def seq2seq_gru() -> dict:
    """GRU encoder-decoder with Luong 'general' attention over the encoder outputs
    (the decoder is teacher-forced on the target sequence)."""
    vocab, emb, hidden = 16000, 256, 512
    b = GraphBuilder("seq2seq_gru", train=lm_train(64, vocab, batch=64, steps=50_000),
                     meta=meta("seq2seq", "GRU encoder-decoder, Luong et al. 2015 general attention",
                               module=_M,
                               note="Luong attention is unscaled by design (no 1/sqrt(d))"))
    src = b.input("src", ["B", "S"], "int64")
    tgt = b.input("tgt", ["B", "T"], "int64")
    s = b.node("encoder.embedding", "Embedding", src, num_embeddings=vocab, embedding_dim=emb)
    s = b.node("encoder.dropout", "Dropout", s, p=0.1)
    enc = b.node("encoder.rnn", "GRU", s, input_size=emb, hidden_size=hidden, num_layers=2,
                 batch_first=True, dropout=0.1)
    t = b.node("decoder.embedding", "Embedding", tgt, num_embeddings=vocab, embedding_dim=emb)
    t = b.node("decoder.dropout", "Dropout", t, p=0.1)
    dec = b.node("decoder.rnn", "GRU", t, input_size=emb, hidden_size=hidden, num_layers=2,
                 batch_first=True, dropout=0.1)
    keys = linear(b, "decoder.attn", f"{enc}:0", hidden, hidden, bias=False)
    keys = b.node("decoder.transpose", "Transpose", keys, dim0=1, dim1=2)
    scores = b.node("decoder.bmm", "MatMul", [f"{dec}:0", keys])
    weights = b.node("decoder.softmax", "Softmax", scores, dim=-1)
    ctx = b.node("decoder.bmm_1", "MatMul", [weights, f"{enc}:0"])
    x = b.node("decoder.cat", "Concat", [f"{dec}:0", ctx], dim=2)
    x = linear(b, "decoder.concat", x, 2 * hidden, hidden)
    x = b.node("decoder.tanh", "Tanh", x)
    x = linear(b, "decoder.out", x, hidden, vocab)
    b.output(x)
    return b.design()


def builders() -> dict:
    return {
        "lstm_lm": lambda: rnn_lm(
            "lstm_lm", "LSTM", 33278, 650, 650, 2, dropout=0.5, seq_len=35,
            origin="pytorch/examples word_language_model, medium LSTM on WikiText-2"),
        "gru_lm": lambda: rnn_lm(
            "gru_lm", "GRU", 33278, 650, 650, 2, dropout=0.5, seq_len=35,
            origin="pytorch/examples word_language_model, --model GRU on WikiText-2"),
        "char_rnn": lambda: rnn_lm(
            "char_rnn", "LSTM", 65, 128, 512, 3, dropout=0.2, seq_len=100, batch=64,
            origin="char-rnn (Karpathy 2015), 3-layer LSTM on tiny-shakespeare"),
        "seq2seq_gru": seq2seq_gru,
    }
