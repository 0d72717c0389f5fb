"""Optional fused C kernels for the BBB hot loop, compiled at first use with the system C compiler.

The kernels (``_bbb_kernels.c``) fuse noise generation, sigma = softplus(rho), w = mu + sigma * eps,
the prior's log-density and its gradient into one OpenMP pass forward and one backward; the noise
comes from a counter-based generator. The forward pass stores w, the noise and d log p(w)/dw; the
backward pass reads rho again and recomputes sigma, sigmoid(rho) and sigmoid(rho)/sigma (it waits
on memory, so that arithmetic is free there). The kernels' exp, log, log1p and sin/cos are inline
branch-free polynomials made of IEEE-exact elementary operations (no libm call), so they round the
same in every vector lane as in scalar code; ``kernel_math`` exposes them to the tests. They cover
float32 CPU tensors; anything else, or a machine without a C compiler, uses the pure-torch fused
path, which computes the same quantities (with torch's own random numbers). Set ``BBB_NATIVE=0``
to switch the kernels off.

The shared library is cached in ``$BBB_NATIVE_CACHE`` (default ``~/.cache/bbb-helpers``) under a
hash of the source and flags, written atomically, so it is compiled once per machine.

Compiler flags: no ``-ffast-math`` (it reassociates sums so that large terms cancel, and its
start-up code switches the whole process to flush-to-zero). ``-fno-math-errno`` and
``-fno-trapping-math`` (the flags torch itself is built with) change no value: they only let the
compiler skip setting ``errno`` and assume no floating-point traps. ``-ffp-contract=off`` keeps
every multiply and add as written (no fused multiply-adds that round differently from the source).
``-march=native`` lets the inline math fuse the multiply-adds it writes as ``fmaf`` (FMA CPUs);
without FMA they round twice (both within the documented accuracy). Only the Cauchy prior's
log1p still calls glibc (its libmvec vector form with ``-DBBB_MVEC``).
"""
import ctypes
import hashlib
import math
import os
import platform
import shutil
import subprocess
import tempfile
import threading
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
        lib.bbb_forward.argtypes = [i64, i64, ptr, ptr, ptr, ptr, u64, i32, ptr, ptr, ptr, i32]
        lib.bbb_backward.argtypes = [i64, i64, ptr, ptr, ptr, ptr, f32, i32, ptr, f32, ptr, ptr,
                                     i32]
        lib.bbb_sample_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, u64, i32]
        lib.bbb_backward_adam_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, f32, i32,
                                              ptr, ptr, i64, ptr, i32]
        lib.bbb_adam_seg.argtypes = [i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i32]
        lib.bbb_math.argtypes = [i32, i64, ptr, ptr, ptr, ptr, i32]
        lib.bbb_fp_mode.argtypes = [i32, ptr]
        lib.bbb_fp_mode.restype = i32
        for f in (lib.bbb_normal, lib.bbb_forward, lib.bbb_backward, lib.bbb_math,
                  lib.bbb_sample_seg,
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


# Reused buffers. Every array the kernels fill (w, eps, what the forward pass keeps, the two
# gradients) is as large as the network (9.6 MB each at 2x1200). Fresh ones cost page faults on
# every step: glibc hands large freed blocks back to the system, and touching new memory faults
# each 4 KiB page in again (benchmarks/profile_step.py times both: forward_fresh / forward).
# So the kernels write into buffers kept here and hand out aliases of them (``detach()``: a new
# tensor on the same memory). A buffer is written again only when no tensor but the pool's own
# refers to its memory (torch's storage use count back at its value on creation): every alias
# handed out -- an output held by the caller, a tensor saved for backward, a parameter's .grad --
# keeps it busy until released. Small arrays (below REUSE_FROM entries) are allocated afresh:
# they cost no page faults; so is everything of a pass that no backward pass follows (evaluation:
# often many samples, and nothing there repeats at a training step's pace), and everything made
# in inference mode (its tensors could never be saved for backward later). What the count does
# not see: a raw pointer, a storage object without a tensor, memory shared with another process
# (share_memory_); nothing here hands a kernel buffer out that way. BBB_BUFFERS=0 (read at
# import) allocates afresh every time.
_USE_COUNT = getattr(torch._C, "_storage_Use_Count", None)
REUSE = _USE_COUNT is not None and os.environ.get("BBB_BUFFERS", "1").lower() not in (
    "0", "false", "no")
REUSE_FROM = 65_536
_POOL = {}
_LOCK = threading.Lock()
_SLOTS = 4  # buffers kept per (tag, shape); more in use at once are allocated and dropped


def buffer(tag, shape):
    """Return an uninitialised float32 CPU tensor of ``shape`` on memory that nothing else uses:
    an alias of a kept buffer of this ``tag`` and shape that every earlier alias has released, or
    a new one."""
    shape = tuple(shape)
    if (not REUSE or math.prod(shape) < REUSE_FROM or torch.is_inference_mode_enabled()):
        return torch.empty(shape, dtype=torch.float32)
    with _LOCK:  # checking a slot and handing out its alias is one step
        slots = _POOL.get((tag, shape))
        if slots is None:
            slots = _POOL[(tag, shape)] = []
        for t, storage, base in slots:
            if _USE_COUNT(storage) == base:
                return t.detach()
        t = torch.empty(shape, dtype=torch.float32)
        if len(slots) < _SLOTS:
            storage = t.untyped_storage()._cdata  # the pool's t keeps this storage alive
            slots.append((t, storage, _USE_COUNT(storage)))
        return t.detach()


def release_buffers():
    """Drop the kept buffers (their memory is freed once every alias is released)."""
    _POOL.clear()


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


MATH = {"exp": 0, "log": 1, "log1p": 2, "cos_turn": 3, "sin_turn": 4, "softplus": 5,
        "sigmoid": 6, "sigmoid_over_softplus": 7, "log_softplus": 8, "madd": 9}


def kernel_math(name, x, y=None, z=None, vector=True):
    """Return the kernels' own float32 ``name`` (a key of ``MATH``) of the tensor ``x``, computed
    in a vectorised loop or (``vector=False``) one element at a time: for the tests of accuracy
    and of vector/scalar equality. ``exp``: for x in [-87, 88]; ``log``: normal x > 0; ``log1p``:
    for x in [0, 1]; ``cos_turn`` / ``sin_turn``: of 2 pi x / 2^24 for integers x in [0, 2^24)
    (the noise's angles); ``madd``: x * y + z as the forward pass forms w = sigma * eps + mu."""
    x = x.to(torch.float32).contiguous()
    y = x if y is None else y.to(torch.float32).contiguous()
    z = x if z is None else z.to(torch.float32).contiguous()
    assert x.shape == y.shape == z.shape
    out = torch.empty_like(x)
    library().bbb_math(MATH[name], x.numel(), x.data_ptr(), y.data_ptr(), z.data_ptr(),
                       out.data_ptr(), int(vector))
    return out


def forward(mu, rho, n_samples, seed, kind, consts, keep=True):
    """Return (w, eps, sums, kept): w and eps of shape (S, *mu.shape) (mu.shape for S = 1), the
    float64 sums [sum log sigma, sum eps^2, sum log p(w), sum sigma^2, sum mu^2] (those the KL
    estimator uses: sum eps^2 and sum log p(w) for the Monte-Carlo KL, sum sigma^2 and sum mu^2
    for the closed form; the others stay 0), and ``kept``, what ``backward`` needs besides mu and
    eps: (rho,) and for the Monte-Carlo KL d log p(w)/dw per sample (None when ``keep`` is False,
    for a forward pass that no backward pass follows). The backward pass recomputes sigma and its
    derivatives from rho, so rho must still hold the values this pass saw (autograd's saved-tensor
    version check ensures it in the layers)."""
    shape = mu.shape if n_samples == 1 else (n_samples, *mu.shape)
    if keep:
        w, eps = buffer("w", shape), buffer("eps", shape)
    else:  # no backward pass follows: evaluation, not the training loop (see buffer)
        w, eps = torch.empty(shape, dtype=torch.float32), torch.empty(shape, dtype=torch.float32)
    sums = torch.zeros(5, dtype=torch.float64)
    kept = None
    if keep:
        kept = (rho,) if kind < 0 else (rho, buffer("dlogp", shape))
    dl = kept[1].data_ptr() if kept is not None and len(kept) > 1 else None
    library().bbb_forward(mu.numel(), n_samples, mu.data_ptr(), rho.data_ptr(), w.data_ptr(),
                          eps.data_ptr(), seed, kind, consts.data_ptr(), sums.data_ptr(), dl,
                          _threads(w.numel()))
    return w, eps, sums, kept


def backward(mu, eps, kept, grad_w, grad_kl, n_samples, kind, closed_inv_s2=0.0):
    """Return (grad_mu, grad_rho) for the fused sampler (kind -1: closed-form KL) from mu, the
    noise and what ``forward`` kept."""
    grad_mu, grad_rho = buffer("grad_mu", mu.shape), buffer("grad_rho", mu.shape)
    gw = None if grad_w is None else grad_w.contiguous()
    rho, dl = kept[0], (kept[1].data_ptr() if len(kept) > 1 else None)
    library().bbb_backward(mu.numel(), n_samples, mu.data_ptr(), rho.data_ptr(), eps.data_ptr(),
                           None if gw is None else gw.data_ptr(), float(grad_kl), kind, dl,
                           float(closed_inv_s2), grad_mu.data_ptr(), grad_rho.data_ptr(),
                           _threads(eps.numel()))
    return grad_mu, grad_rho
