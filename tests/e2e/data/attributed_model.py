"""The model of the attribution fixture attributed.log (docs/trace_format.md,
"Attribution keys"): a block of a convolution (parameters) and a batch norm
without affine parameters (buffers) under a Sequential, one SGD step with
momentum (gradients, optimizer state). Captured from the repository's root:
  PYTHONPATH=python python3 -m dtrcheck.capture tests/e2e/data/attributed_model.py \
      -o tests/e2e/data/attributed.log"""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2, affine=False)

    def forward(self, x):
        return self.bn(self.conv(x)).relu()


torch.manual_seed(0)
model = nn.Sequential(Block())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(2, 1, 4, 4)


def step():
    optimizer.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    optimizer.step()
    return loss
