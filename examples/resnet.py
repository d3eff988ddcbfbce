"""A small ResNet (CIFAR-style, 8 layers, width 16) built from torch.nn: one
SGD training step on a batch of 16 random 32x32 images, for dtrcheck.capture.

    /usr/bin/python3 -m dtrcheck.capture examples/resnet.py -o resnet.log

The contract (docs/python.md): define `model` and `step()`, which runs one
training step and returns the loss. Everything else runs before the capture.
"""

import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, inp: int, out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut = nn.Sequential()
        if stride != 1 or inp != out:
            self.shortcut = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        y += self.shortcut(x)  # in place: a MUTATE in the trace
        return self.relu(y)


class ResNet(nn.Module):
    def __init__(self, width: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(BasicBlock(width, width, 1), BasicBlock(width, 2 * width, 2),
                                    BasicBlock(2 * width, 4 * width, 2))
        self.head = nn.Linear(4 * width, classes)

    def forward(self, x):
        y = self.layers(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


model = ResNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
images = torch.randn(16, 3, 32, 32)
labels = torch.randint(0, 10, (16,))


def step():
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    print(float(step()))
