"""A small LSTM language-model step built from torch.nn: a 2-layer LSTM
(hidden 64) over 24 steps of a batch of 8, trained with Adam, for
dtrcheck.capture.

    /usr/bin/python3 -m dtrcheck.capture examples/lstm.py -o lstm.log

The contract (docs/python.md): define `model` and `step()`, which runs one
training step and returns the loss. Everything else runs before the capture.
"""

import torch
from torch import nn


class LanguageModel(nn.Module):
    def __init__(self, vocabulary: int = 100, embedding: int = 32, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embedding)
        self.lstm = nn.LSTM(embedding, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocabulary)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))  # nn.LSTM returns (output, (h, c))
        return self.head(out)


model = LanguageModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 100, (8, 25))
inputs, targets = tokens[:, :-1], tokens[:, 1:]


def step():
    optimizer.zero_grad()
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    print(float(step()))
