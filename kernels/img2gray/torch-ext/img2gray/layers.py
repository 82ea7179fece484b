"""Layers for kernels' ``kernelize``, as kernel-builder kernels ship them.

``kernelize`` swaps a module's ``forward`` for the one of a layer here when
the module was decorated with ``use_kernel_forward_from_hub("Img2Gray")`` and
mapped to this repo: ``LayerRepository(repo_id, layer_name="Img2Gray", ...)``.
kernels requires such a layer to be stateless (no ``__init__``, no members of
its own beyond ``has_backward``/``can_torch_compile``) and its ``forward`` to
take what the module's ``forward`` takes.
"""

import torch
import torch.nn as nn


class Img2Gray(nn.Module):
    """(H, W, 3) uint8 RGB -> (H, W) uint8 gray, through the img2gray op."""

    # An integer image op: there is nothing to differentiate.
    has_backward = False
    # The op has a fake implementation (see __init__.py), so torch.compile traces it.
    can_torch_compile = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        from . import img2gray

        return img2gray(input)
