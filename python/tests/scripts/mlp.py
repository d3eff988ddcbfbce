"""The hand-checked model of test_capture_mlp.py: a two-layer MLP
(4 -> 3 -> 2, float32, in-place ReLU), MSE loss on a batch of 2, one SGD step."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(inplace=True), nn.Linear(3, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
y = torch.randn(2, 2)


def step():
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
