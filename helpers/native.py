"""Optional fused C kernels for the BBB hot loop, compiled at first use with the system C compiler.

The kernels (``_bbb_kernels.c``) fuse noise generation, sigma = softplus(rho), w = mu + sigma * eps,
the prior's log-density and its gradient into one OpenMP pass forward and one backward; the noise
comes from a counter-based generator and is stored for the backward pass (cheaper than
regenerating it). They cover float32 CPU tensors; anything
else, or a machine without a C compiler, uses the pure-torch fused path, which computes the same
quantities (with torch's own random numbers). Set ``BBB_NATIVE=0`` to switch the kernels off.

The shared library is cached in ``$BBB_NATIVE_CACHE`` (default ``~/.cache/bbb-helpers``) under a
hash of the source and flags, written atomically, so it is compiled once per machine.

Compiler flags: no ``-ffast-math`` (it reassociates sums so that large terms cancel, and its
start-up code switches the whole process to flush-to-zero). ``-fno-math-errno`` and
``-fno-trapping-math`` (the flags torch itself is built with) change no value: they only let the
compiler skip setting ``errno`` and assume no floating-point traps. ``-ffp-contract=off`` keeps
every multiply and add as written (no fused multiply-adds that round differently from the source).
The vector exp / log / cos are glibc's libmvec (``-DBBB_MVEC``); without it the loops run scalar.
"""
import ctypes
import hashlib
import math
import os
import platform
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("_bbb_kernels.c")
KINDS = {"GaussianPrior": 0, "ScaleMixturePrior": 1, "LaplacePrior": 2, "CauchyPrior": 3}
_SAFE = ["-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-fopenmp"]
_FLAG_SETS = (["-O3", "-march=native", *_SAFE, "-DBBB_MVEC"],
              ["-O3", *_SAFE, "-DBBB_MVEC"],
              ["-O3", "-march=native", *_SAFE],
              ["-O2", "-ffp-contract=off", "-fopenmp"])
_lib = None
_tried = False


def _cache_dir():
    return Path(os.environ.get("BBB_NATIVE_CACHE") or Path.home() / ".cache" / "bbb-helpers")


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("model name", "flags")):
                    return line.strip()
    except OSError:
        pass
    return platform.processor()


def _compile():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    src = SOURCE.read_bytes()
    errors = []
    for flags in _FLAG_SETS:  # -march=native: the cache key includes this machine's CPU
        key = " ".join([cc, *flags, platform.machine(), _cpu_name()])
        tag = hashlib.sha256(src + key.encode()).hexdigest()[:16]
        target = _cache_dir() / f"bbb_kernels_{tag}.so"
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".so")
        os.close(fd)
        # --no-undefined: a libmvec without one of the vector functions fails here, not at load
        cmd = [cc, *flags, "-shared", "-fPIC", str(SOURCE), "-o", tmp, "-lm",
               "-Wl,--no-undefined"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 0:
            os.replace(tmp, target)
            return target
        os.unlink(tmp)
        errors.append(proc.stderr.strip()[-500:])
    raise RuntimeError("compiling the BBB kernels failed: " + " | ".join(errors))


def library():
    """Return the loaded kernel library, or None (kernels disabled or unavailable)."""
    global _lib, _tried
    if os.environ.get("BBB_NATIVE", "1").lower() in ("0", "false", "no"):
        return None
    if _tried:
        return _lib
    _tried = True
    try:
        lib = ctypes.CDLL(str(_compile()))
        i64, u64, f32, i32 = ctypes.c_int64, ctypes.c_uint64, ctypes.c_float, ctypes.c_int
        ptr = ctypes.c_void_p
        lib.bbb_normal.argtypes = [i64, u64, ptr, i32]
        lib.bbb_forward.argtypes = [i64, i64, ptr, ptr, ptr, ptr, u64, i32, ptr, ptr, i32]
        lib.bbb_backward.argtypes = [i64, i64, ptr, ptr, ptr, ptr, f32, i32, ptr, f32, ptr, ptr,
                                     i32]
        lib.bbb_sample_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, u64, i32]
        lib.bbb_backward_adam_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, f32, i32,
                                              ptr, ptr, i64, ptr, i32]
        lib.bbb_adam_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i32]
        lib.bbb_fp_mode.argtypes = [i32, ptr]
        lib.bbb_fp_mode.restype = i32
        for f in (lib.bbb_normal, lib.bbb_forward, lib.bbb_backward, lib.bbb_sample_seg,
                  lib.bbb_backward_adam_seg, lib.bbb_adam_seg):
            f.restype = None
        _lib = lib
    except (RuntimeError, OSError) as err:
        warnings.warn(f"BBB C kernels unavailable, using the pure-torch path ({err})")
        _lib = None
    return _lib


def usable(t):
    """Return True when the kernels can handle tensor ``t`` (float32, CPU) and are available."""
    return t.dtype == torch.float32 and t.device.type == "cpu" and library() is not None


def draw_seed():
    """Return a 63-bit seed drawn from torch's global generator (so seeding and checkpoints cover it)."""
    return int(torch.randint(0, 2**62, (1,)).item())


def prior_constants(prior):
    """Return (kind, float32 tensor of constants) describing ``prior`` to the kernels, or None.

    Cached on the prior object, keyed by its current parameter values."""
    kind = KINDS.get(type(prior).__name__)
    if kind is None:
        return None
    key = tuple(b.item() for b in prior.buffers())
    cached = getattr(prior, "_kernel_constants", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    value = _constants(prior, kind)
    prior._kernel_constants = (key, value)
    return value


def _constants(prior, kind):
    log_sqrt_2pi = 0.5 * math.log(2 * math.pi)
    if kind == 1:
        c = list(prior.constants())
    elif kind == 0:
        s = prior._buf("sigma")
        c = [1.0 / s**2, -math.log(s) - log_sqrt_2pi]
    elif kind == 2:
        b = prior._buf("b")
        c = [1.0 / b, -math.log(2 * b)]
    else:
        g = prior._buf("gamma")
        c = [1.0 / g**2, -math.log(math.pi * g)]
    return kind, torch.tensor(c + [0.0] * (6 - len(c)), dtype=torch.float32)


def _threads(n):
    """Threads for a kernel over n entries: one for small work (a parallel region costs more)."""
    return torch.get_num_threads() if n >= 65_536 else 1


def fp_mode_bits(threads=None):
    """Return the flush-to-zero / denormals-are-zero bits (MXCSR & 0x8040) of every thread of an
    OpenMP region of ``threads`` threads (default torch's), or None without kernels or SSE.

    The kernels flush subnormals only inside their own parallel regions and restore each thread's
    mode before returning; tests use this to check that nothing leaks."""
    lib = library()
    if lib is None:
        return None
    n = int(threads or torch.get_num_threads())
    out = (ctypes.c_uint * n)()
    if not lib.bbb_fp_mode(n, out):
        return None
    return list(out)


def normal(shape, seed):
    """Return float32 standard normal noise of ``shape`` from the kernels' generator."""
    out = torch.empty(shape, dtype=torch.float32)
    library().bbb_normal(out.numel(), seed, out.data_ptr(), _threads(out.numel()))
    return out


def forward(mu, rho, n_samples, seed, kind, consts):
    """Return (w, eps, sums): w and eps of shape (S, *mu.shape) (mu.shape for S = 1) and the
    float64 sums [sum log sigma, sum eps^2, sum log p(w), sum sigma^2, sum mu^2]."""
    shape = mu.shape if n_samples == 1 else (n_samples, *mu.shape)
    w, eps = torch.empty(shape, dtype=torch.float32), torch.empty(shape, dtype=torch.float32)
    sums = torch.zeros(5, dtype=torch.float64)
    library().bbb_forward(mu.numel(), n_samples, mu.data_ptr(), rho.data_ptr(), w.data_ptr(),
                          eps.data_ptr(), seed, kind, consts.data_ptr(), sums.data_ptr(),
                          _threads(w.numel()))
    return w, eps, sums


def backward(mu, rho, eps, grad_w, grad_kl, n_samples, kind, consts, closed_inv_s2=0.0):
    """Return (grad_mu, grad_rho) for the fused sampler (kind -1: closed-form KL)."""
    grad_mu, grad_rho = torch.empty_like(mu), torch.empty_like(rho)
    gw = None if grad_w is None else grad_w.contiguous()
    library().bbb_backward(mu.numel(), n_samples, mu.data_ptr(), rho.data_ptr(), eps.data_ptr(),
                           None if gw is None else gw.data_ptr(), float(grad_kl), kind,
                           consts.data_ptr(), float(closed_inv_s2), grad_mu.data_ptr(),
                           grad_rho.data_ptr(), _threads(eps.numel()))
    return grad_mu, grad_rho
