"""RGB to grayscale: gray = 0.21 R + 0.72 G + 0.07 B on uint8 HWC images.

Rounding: the exact value is rounded to the nearest integer, ties up, i.e.
``(21*R + 72*G + 7*B + 50) // 100``; CPU and CUDA give identical results.
"""

import torch

from ._ops import add_op_namespace_prefix, ops

__all__ = ["img2gray", "layers"]

# torch.compile traces ops with fake tensors. img2gray only writes into
# `output`, so its fake implementation has nothing to do; without one,
# fullgraph compilation stops at the op.
if hasattr(torch, "library") and hasattr(torch.library, "register_fake"):
    torch.library.register_fake(add_op_namespace_prefix("img2gray"))(lambda input, output: None)
elif hasattr(torch, "library") and hasattr(torch.library, "impl_abstract"):
    torch.library.impl_abstract(add_op_namespace_prefix("img2gray"))(lambda input, output: None)


def img2gray(input: torch.Tensor) -> torch.Tensor:
    """Convert an (H, W, 3) uint8 RGB tensor into an (H, W) uint8 gray tensor.

    The result is on the same device as ``input``.
    """
    # Checked here as well as in C++ so callers get a ValueError that names
    # the fix, rather than a RuntimeError from deep inside the dispatcher.
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"img2gray: expected a torch.Tensor, got {type(input).__name__}")
    if input.dtype != torch.uint8:
        raise ValueError(
            f"img2gray: expected dtype torch.uint8, got {input.dtype}; "
            "convert with .to(torch.uint8) (values 0..255)"
        )
    if input.dim() != 3:
        raise ValueError(
            f"img2gray: expected a 3-D HWC tensor (height, width, 3), "
            f"got {input.dim()}-D with shape {tuple(input.shape)}"
        )
    if input.shape[2] != 3:
        raise ValueError(
            f"img2gray: expected 3 channels (RGB) in the last dimension (HWC), "
            f"got shape {tuple(input.shape)}; a CHW image needs .permute(1, 2, 0).contiguous()"
        )
    if not input.is_contiguous():
        raise ValueError(
            f"img2gray: expected a contiguous tensor, got strides {tuple(input.stride())} "
            f"for shape {tuple(input.shape)}; call .contiguous() first"
        )
    output = torch.empty(input.shape[:2], dtype=torch.uint8, device=input.device)
    ops.img2gray(input, output)
    return output


# kernels' kernelize reads `kernel.layers.<name>`: imported after img2gray
# is defined, which its layer calls.
from . import layers  # noqa: E402
