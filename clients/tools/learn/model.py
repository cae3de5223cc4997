"""The ``learned`` level's network in torch, for training; :func:`to_numpy` gives the arrays the
numpy forward pass (:func:`bigtwo.engine.bots.learned.q_values`) plays with, the same function."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from bigtwo.engine.bots.learned import LAYERS
from bigtwo.engine.bots.learned_features import ACTION_SIZE, STATE_SIZE
from torch import nn

HIDDEN = (256, 256, 256, 128)


class QNet(nn.Module):
    """Q(state, move): the state through two layers, joined with the move's numbers, two more."""

    def __init__(self, generator: torch.Generator) -> None:
        super().__init__()
        h1, h2, h3, h4 = HIDDEN
        self.state1 = nn.Linear(STATE_SIZE, h1)
        self.state2 = nn.Linear(h1, h2)
        self.joint_state = nn.Linear(h2, h3)
        self.joint_action = nn.Linear(ACTION_SIZE, h3, bias=False)
        self.joint2 = nn.Linear(h3, h4)
        self.out = nn.Linear(h4, 1)
        # Initialised from the trainer's own generator: the same seed, the same first network.
        for module in (self.state1, self.state2, self.joint_state, self.joint_action, self.joint2, self.out):
            bound = 1.0 / module.in_features**0.5
            with torch.no_grad():
                module.weight.uniform_(-bound, bound, generator=generator)
                if module.bias is not None:
                    module.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.state2(torch.relu(self.state1(state))))
        joint = torch.relu(self.joint_state(hidden) + self.joint_action(action))
        rated: torch.Tensor = self.out(torch.relu(self.joint2(joint))).squeeze(-1)
        return rated


def to_numpy(net: QNet) -> dict[str, Any]:
    """The arrays of :data:`bigtwo.engine.bots.learned.LAYERS` (weights transposed to ``x @ w``)."""

    def arr(tensor: torch.Tensor) -> Any:
        return tensor.detach().cpu().numpy().astype(np.float32)

    arrays = {
        "w1": arr(net.state1.weight.T),
        "b1": arr(net.state1.bias),
        "w2": arr(net.state2.weight.T),
        "b2": arr(net.state2.bias),
        "w3s": arr(net.joint_state.weight.T),
        "w3a": arr(net.joint_action.weight.T),
        "b3": arr(net.joint_state.bias),
        "w4": arr(net.joint2.weight.T),
        "b4": arr(net.joint2.bias),
        "w5": arr(net.out.weight[0]),
        "b5": arr(net.out.bias),
    }
    assert tuple(arrays) == LAYERS
    return arrays


def from_numpy(net: QNet, arrays: dict[str, Any]) -> QNet:
    """Load :func:`to_numpy`'s arrays (a shipped or exported .npz) into ``net``; returns it."""
    layers = {
        "state1": ("w1", "b1"),
        "state2": ("w2", "b2"),
        "joint_state": ("w3s", "b3"),
        "joint2": ("w4", "b4"),
    }
    with torch.no_grad():
        for module_name, (weight, bias) in layers.items():
            module = getattr(net, module_name)
            module.weight.copy_(torch.from_numpy(np.asarray(arrays[weight]).T.copy()))
            module.bias.copy_(torch.from_numpy(np.asarray(arrays[bias]).copy()))
        net.joint_action.weight.copy_(torch.from_numpy(np.asarray(arrays["w3a"]).T.copy()))
        net.out.weight.copy_(torch.from_numpy(np.asarray(arrays["w5"])[None, :].copy()))
        net.out.bias.copy_(torch.from_numpy(np.asarray(arrays["b5"]).reshape(1).copy()))
    return net
