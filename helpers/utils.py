"""Seeding, device choice, project paths, progress bars and atomic result files."""
import contextlib
import datetime as _dt
import functools
import json
import math
import os
import platform
import random
import tempfile
from pathlib import Path

import numpy as np
import torch

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def check_seed(seed):
    """Return ``seed`` as an int, or raise ValueError unless it is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def seed_everything(seed):
    """Seed Python, NumPy and torch (CPU and CUDA) from one integer; return the seed."""
    seed = check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return seed


@contextlib.contextmanager
def one_thread():
    """Run the block on one torch CPU thread (small networks: more threads only synchronise)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def get_device(device=None):
    """Return a torch.device: the one asked for, else cuda > mps > cpu."""
    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'cuda', 'cuda:0', 'mps' or None "
                         "(automatic)") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available here; use "
                         "DEVICE=None (automatic) or 'cpu'")
    return dev


def _dir_from_env(var, default):
    path = Path(os.environ.get(var) or default)
    return path if path.is_absolute() else PROJECT_ROOT / path


_ACTIVE_PROFILE = None  # the run profile a notebook asked for last (helpers.get_profile)


def output_root():
    """Return the folder that holds figures/, results/ and checkpoints/.

    The environment wins (``BBB_OUTPUT_DIR``, as ``tools/run_notebooks.py`` and the Makefile set
    it); otherwise the profile decides: ``default`` (or none asked for) writes the committed
    outputs in the project, every other profile ``build/<profile>``. The profile is the one
    ``helpers.get_profile`` was last called with, so a notebook run by papermill, JupyterLab or
    nbval with ``PROFILE = "smoke"`` never writes where ``default`` writes."""
    env = os.environ.get("BBB_OUTPUT_DIR")
    if env:
        return _dir_from_env("BBB_OUTPUT_DIR", PROJECT_ROOT)
    if _ACTIVE_PROFILE not in (None, "default"):
        return PROJECT_ROOT / "build" / _ACTIVE_PROFILE
    return PROJECT_ROOT


def set_active_profile(profile):
    """Make ``profile`` decide the output root (see ``output_root``); return the root."""
    global _ACTIVE_PROFILE
    _ACTIVE_PROFILE = profile
    return output_root()


def use_profile_outputs(profile):
    """Point the output root at ``build/<profile>`` for every profile but ``default`` (unless
    ``BBB_OUTPUT_DIR`` is set already), so that only ``default`` writes the committed outputs;
    return the output root. For the drivers in tools/ (their subprocesses inherit it)."""
    if profile != "default" and not os.environ.get("BBB_OUTPUT_DIR"):
        os.environ["BBB_OUTPUT_DIR"] = str(PROJECT_ROOT / "build" / profile)
    return set_active_profile(profile)


def figures_dir():
    """Return the figures directory (env ``BBB_FIGURES_DIR``, default ``<output root>/figures``)."""
    return _dir_from_env("BBB_FIGURES_DIR", output_root() / "figures")


def results_dir():
    """Return the results directory (env ``BBB_RESULTS_DIR``, default ``<output root>/results``)."""
    return _dir_from_env("BBB_RESULTS_DIR", output_root() / "results")


def checkpoints_dir():
    """Return the checkpoint directory (env ``BBB_CHECKPOINT_DIR``, default
    ``<output root>/checkpoints``)."""
    return _dir_from_env("BBB_CHECKPOINT_DIR", output_root() / "checkpoints")


def quiet():
    """Return True when progress bars should stay silent (env ``CI`` or ``BBB_QUIET`` set)."""
    return any(os.environ.get(v, "").lower() not in ("", "0", "false") for v in ("CI", "BBB_QUIET"))


def progress(iterable=None, **kwargs):
    """Return a tqdm.auto progress bar, disabled under CI / BBB_QUIET."""
    if quiet():
        from tqdm.std import tqdm
        kwargs["disable"] = True
    else:
        import warnings
        with warnings.catch_warnings():  # tqdm.auto warns when ipywidgets is missing
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
    kwargs.setdefault("leave", False)
    return tqdm(iterable, **kwargs)


def remove_stale_tmp(path):
    """Remove temporary files an interrupted ``atomic_write_bytes`` of ``path`` left behind (a
    killed process cannot clean up after itself); return how many were removed."""
    path = Path(path)
    removed = 0
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            try:
                tmp.unlink()
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def atomic_write_bytes(path, data):
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``; return the path.

    Temporary files of earlier, interrupted writes of the same path are removed first (one writer
    per path is assumed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_tmp(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


_ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile",
              "neon", "asimd", "sve")


@functools.lru_cache(maxsize=1)
def _cpu_description():
    """Return (model name, instruction-set flags of interest) from /proc/cpuinfo where it exists."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                if key in ("model name", "hardware") and model in ("", platform.machine(),
                                                                   platform.processor()):
                    model = value.strip()
                elif key in ("flags", "features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return model, [f for f in _ISA_FLAGS if f in flags]


@functools.lru_cache(maxsize=1)
def _torch_build():
    """Return the BLAS and oneDNN builds torch reports (``torch.__config__.show()``)."""
    import re
    text = torch.__config__.show()
    out = {}
    blas = re.search(r"BLAS_INFO=(\w+)", text)
    mkl = re.search(r"Math Kernel Library Version ([\w.]+)", text)
    out["blas"] = (blas.group(1) if blas else "unknown") + (f" {mkl.group(1)}" if mkl else "")
    dnn = re.search(r"(?:MKL-DNN|oneDNN) v([\w.]+)", text)
    out["onednn"] = dnn.group(1) if dnn else None
    try:
        out["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except AttributeError:
        out["cpu_capability"] = None
    return out


def machine_info(device=None):
    """Return a dict describing the hardware and software of this run: the CPU model and its
    vector instruction sets, torch's thread count, BLAS / oneDNN builds and package versions.

    Runs repeat exactly only on the same machine and thread count: float kernels (matmul
    blocking, vector width) differ between CPUs, so this is recorded beside every number."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    model, isa = _cpu_description()
    info = {"device": str(device), "torch": torch.__version__, "python": platform.python_version(),
            "numpy": np.__version__, "cpu": model, "arch": platform.machine(), "isa": isa,
            "threads": torch.get_num_threads(), "cpu_count": os.cpu_count(),
            **_torch_build(), "platform": platform.platform()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info


_FRACTION_WORDS = ("error", "coverage", "accuracy", "fraction", "probability")


def _check_fractions(metrics, prefix="metrics"):
    for key, value in metrics.items():
        name = f"{prefix}.{key}"
        if isinstance(value, dict):
            _check_fractions(value, name)
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} is {value}: results must be finite numbers")
        if any(w in key.lower() for w in _FRACTION_WORDS) and isinstance(value, (int, float)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} = {value} looks like a percentage: store error rates, "
                                 "coverages and probabilities as fractions in [0, 1]")


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, torch.Tensor):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, Path):
        return str(obj)
    return obj


def save_results(notebook, experiment, config, metrics, profile, seed, device=None, wall_s=None,
                 extra=None):
    """Write ``results/<notebook>/<experiment>.json`` atomically; return its path.

    The file holds {profile, seed, device, torch, machine, wall_s, created, config, metrics}; error
    rates, coverages and probabilities in ``metrics`` must be fractions in [0, 1]. A file that
    already holds the same result (every field but the run's machine, wall time and date) is left
    as it is, so re-running a notebook changes only the results whose numbers changed.
    """
    metrics = _jsonable(metrics)
    _check_fractions(metrics)
    record = {"profile": profile, "seed": seed, "device": str(device or "cpu"),
              "torch": torch.__version__, "machine": machine_info(device),
              "wall_s": None if wall_s is None else round(float(wall_s), 3),
              "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "config": _jsonable(config), "metrics": metrics}
    if extra:
        record.update(_jsonable(extra))
    path = results_dir() / notebook / f"{experiment}.json"
    if not _same_result(path, record):
        atomic_write_bytes(path, (json.dumps(record, indent=2, sort_keys=False) + "\n").encode())
    return path


# what describes the run rather than its result: a re-run that reproduces every other field keeps
# the stored file (and its record of the machine, time and date that first computed it)
RUN_PROVENANCE = ("machine", "wall_s", "created")


def _same_result(path, record):
    """Return True when ``path`` holds ``record`` up to its provenance (``RUN_PROVENANCE``)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    new = json.loads(json.dumps(record))  # as it would be read back (tuples -> lists, keys -> str)
    strip = lambda r: {k: v for k, v in r.items() if k not in RUN_PROVENANCE}  # noqa: E731
    return strip(old) == strip(new)


def load_results(notebook, experiment):
    """Return the dict stored by ``save_results`` (FileNotFoundError names the path if missing)."""
    path = results_dir() / notebook / f"{experiment}.json"
    if not path.exists():
        raise FileNotFoundError(f"no results at {path}: run notebook {notebook} first")
    return json.loads(path.read_text())


PENDING = "NOT COMPUTED YET"


def pending(result, what, command):
    """Print a notice and return True when ``result`` is missing (None or empty), else False."""
    if result:
        return False
    print(f"{PENDING}: {what}. Run `{command}` (it resumes from its checkpoints) or execute "
          "this notebook with TRAIN_MISSING = True; the cells that need it are skipped.")
    return True
