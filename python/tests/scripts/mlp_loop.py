"""scripts/mlp.py's model, data and optimizer, trained in a loop at module
level with no step(): captured as it is, from the first forward to the end
of the first optimizer step (test_capture_plain_script.py)."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(inplace=True), nn.Linear(3, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 4)
y = torch.randn(2, 2)

for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
