"""A model whose operators come from a forward of its own, for the attribution
checks of test_capture_attribution.py: Linear(4, 3), a residual block
x + tanh(fc(x)) (x is used twice, so backward sums two gradients), Linear(3, 2);
a batch of 2, MSE loss, one SGD step with momentum after zero_grad()."""
import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return x + h


model = nn.Sequential(nn.Linear(4, 3), Residual(), nn.Linear(3, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(2, 4)
y = torch.randn(2, 2)


def step():
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss
