"""Shared fixtures for the reference's tests.

`device` runs a test on the CPU and again on CUDA; the CUDA run carries the
`cuda` marker and is skipped on machines without a GPU. On CUDA, TF32 is off
for the duration of the test so float32 matmuls keep their full precision.

`tol` is the tolerance for comparing a result computed on `device` with an
expected value computed on the CPU by an independent source (PyTorch's own
attention, the Python math module, numpy).
"""

import pytest
import torch

NO_CUDA = not torch.cuda.is_available()

CPU_TOL = {"atol": 1e-6, "rtol": 0.0}
CUDA_TOL = {"atol": 1e-4, "rtol": 1e-3}


@pytest.fixture(
    params=[
        pytest.param("cpu", id="cpu"),
        pytest.param(
            "cuda",
            id="cuda",
            marks=[pytest.mark.cuda, pytest.mark.skipif(NO_CUDA, reason="needs a CUDA device")],
        ),
    ]
)
def device(request):
    if request.param != "cuda":
        yield request.param
        return
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield request.param
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.fixture
def tol(device):
    return CPU_TOL if device == "cpu" else CUDA_TOL


@pytest.fixture
def gen():
    """A fresh, seeded CPU generator: every test draws the same inputs on every run."""
    return torch.Generator().manual_seed(20240611)
