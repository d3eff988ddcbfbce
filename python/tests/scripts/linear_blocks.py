"""Eight Linear+ReLU blocks of width 64 on a batch of 1024, in three groups
(first: 2 blocks, middle: 4, last: 2), MSE loss, one SGD step with momentum:
the model of test_capture_checkpoint.py, which checkpoints `middle`.

Each block keeps one activation for the backward, its ReLU's output, which is
also the next block's input: checkpointing one block alone keeps the same
tensors (torch.utils.checkpoint keeps a region's input), checkpointing the
group of four drops the three ReLU outputs inside it."""
from collections import OrderedDict

import torch
from torch import nn

WIDTH, BATCH = 64, 1024


def blocks(n):
    return nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.ReLU()) for _ in range(n)])


model = nn.Sequential(OrderedDict(first=blocks(2), middle=blocks(4), last=blocks(2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(BATCH, WIDTH)
y = torch.randn(BATCH, WIDTH)


def step():
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
