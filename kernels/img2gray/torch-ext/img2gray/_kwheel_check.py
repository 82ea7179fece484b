"""img2gray's own smoke test, run by `kwheel validate` in a fresh environment.

kwheel calls ``run(device=...)`` after installing the wheel; an exception is a
failure, the returned dict goes into the validation report. The reference is
computed in plain torch from the weights alone (0.21 R + 0.72 G + 0.07 B),
independently of the kernel's own integer rounding, so any rounding rule
within 1 of the exact value passes and a wrong kernel does not.
"""

import torch

from . import img2gray

_SIZES = [(1, 1), (17, 31), (1080, 1920)]


def _reference(x: torch.Tensor) -> torch.Tensor:
    xf = x.to(torch.float64)
    gray = 0.21 * xf[..., 0] + 0.72 * xf[..., 1] + 0.07 * xf[..., 2]
    return gray.round().clamp(0, 255).to(torch.uint8)


def _max_diff(y: torch.Tensor, x: torch.Tensor) -> int:
    if y.shape != x.shape[:2] or y.dtype != torch.uint8 or y.device != x.device:
        raise AssertionError(
            f"expected a uint8 {tuple(x.shape[:2])} tensor on {x.device}, "
            f"got {y.dtype} {tuple(y.shape)} on {y.device}"
        )
    return int((y.to(torch.int16) - _reference(x).to(torch.int16)).abs().max().item())


def _image(gen: torch.Generator, h: int, w: int, device: str) -> torch.Tensor:
    return torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=gen).to(device)


def run(device: str) -> dict:
    gen = torch.Generator().manual_seed(1234)
    cases = []
    for h, w in _SIZES:
        x = _image(gen, h, w, device)
        diff = _max_diff(img2gray(x), x)
        if diff > 1:
            raise AssertionError(f"{h}x{w}: max abs diff {diff} against the plain-torch reference (allowed: 1)")
        cases.append({"size": f"{h}x{w}", "max_abs_diff": diff})

    # A transposed view is non-contiguous: the wrapper must refuse it with a
    # clear error or compute the right answer; never silently garbage.
    base = _image(gen, 31, 17, device)
    view = base.transpose(0, 1)
    try:
        diff = _max_diff(img2gray(view), view)
        if diff > 1:
            raise AssertionError(f"non-contiguous input: max abs diff {diff}")
        non_contiguous = f"handled (max abs diff {diff})"
    except ValueError as e:
        if "contiguous" not in str(e):
            raise AssertionError(f"non-contiguous input refused without saying why: {e}") from e
        non_contiguous = "rejected with a clear error"

    if not hasattr(torch, "compile"):
        compiled = f"skipped: torch {torch.__version__} has no torch.compile"
    else:
        x = _image(gen, 17, 31, device)
        fn = torch.compile(img2gray, fullgraph=True)
        diff = _max_diff(fn(x), x)
        if diff > 1:
            raise AssertionError(f"torch.compile(fullgraph=True): max abs diff {diff}")
        compiled = f"ok (fullgraph, max abs diff {diff})"
    return {"cases": cases, "non_contiguous": non_contiguous, "torch_compile": compiled}
