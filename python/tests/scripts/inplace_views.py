"""A model made of the in-place operators and views the capture must handle
(test_capture_inplace.py): in-place ops on fresh tensors (MUTATE), on views
and on constants (rebound with COPY_FROM), views of views, a storage that
grows (resize_), a storage swapped outside any operator (`.data =`), and two
inputs that are views of one tensor made before the step (CONSTANT + COPY)."""
import torch
from torch import nn


class InPlaceAndViews(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x, extra):
        y = self.lin(x)
        a, b = y[:, :4], y[:, 4:]         # two views of y
        a = a.sigmoid()                   # a new tensor
        b.tanh_()                         # in place on a view of y
        z = torch.cat([a, b], 1).t()      # a transposed view
        z = z.contiguous()
        z.add_(extra.t())                 # in place, z the only tensor on its storage
        z.relu_()
        w = z.view(-1)[:32]               # a view of a view
        self.count += 1                   # in place on a buffer (a constant)
        buf = torch.empty(0)
        buf.resize_(16)                   # the storage grows
        buf.copy_(w[:16])
        return z.sum() + buf.sum() + w.mean()


model = InPlaceAndViews()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
base = torch.randn(4, 16)
x, extra = base[:, :8], base[:, 8:]      # two views of one storage


def step():
    optimizer.zero_grad()
    loss = model(x, extra)
    loss.backward()
    with torch.no_grad():
        model.lin.weight.grad.mul_(0.5)                           # in place on a gradient
        model.lin.bias.data = model.lin.bias.data.clone()         # storage swapped outside operators
    optimizer.step()
    return loss
