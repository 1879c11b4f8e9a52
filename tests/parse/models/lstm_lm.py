"""Word-level LSTM language models: tuple unpacking, slicing, weight tying."""
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab=100, emb=32, hidden=48, layers=2, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        x = self.embed(tokens)
        out, (h, c) = self.lstm(x)
        last = out[:, -1, :]
        return self.head(last)


class TiedLM(nn.Module):
    def __init__(self, ntoken=120, ninp=32, nhid=32, nlayers=1, dropout=0.1):
        super(TiedLM, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, nlayers, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, input):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb)
        output = self.drop(output)
        return self.decoder(output)
