"""Data sets as in-memory tensors: MNIST / Fashion-MNIST (torchvision layout) and UCI Mushroom.

The data directory is resolved from an argument, then the env variable ``BBB_DATA_DIR``, then
``./data`` under the project. Missing files are downloaded (torchvision / UCI) unless
``download=False``; offline, the error says where files were looked for and how to fix it.
"""
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .utils import PROJECT_ROOT

IMAGE_SETS = ("MNIST", "FashionMNIST")
_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
MUSHROOM_URL = ("https://archive.ics.uci.edu/ml/machine-learning-databases/mushroom/"
                "agaricus-lepiota.data")
PAPER_PIXEL_SCALE = 126.0  # the paper divides pixel values by 126


def data_dir(path=None):
    """Return the data directory: ``path``, else $BBB_DATA_DIR, else <project>/data."""
    chosen = path or os.environ.get("BBB_DATA_DIR") or PROJECT_ROOT / "data"
    return Path(chosen).expanduser().resolve()


def _missing_error(what, looked, root):
    return FileNotFoundError(
        f"{what} not found; looked for {looked}. Fix: set BBB_DATA_DIR (or pass data_dir=) to a "
        f"folder holding it, or run once with internet access so it is downloaded into {root}.")


def verify_checksums(root=None, names=None):
    """Check files against ``<root>/SHA256SUMS``; return the list of files checked.

    Raises ValueError naming the first file whose checksum differs.
    """
    root = data_dir(root)
    sums = root / "SHA256SUMS"
    if not sums.exists():
        raise FileNotFoundError(f"no SHA256SUMS in {root}")
    checked = []
    for line in sums.read_text().splitlines():
        if not line.strip():
            continue
        digest, name = line.split(maxsplit=1)
        name = name.lstrip("*")
        if names is not None and not any(name.startswith(n) for n in names):
            continue
        h = hashlib.sha256()
        with open(root / name, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != digest:
            raise ValueError(f"checksum mismatch for {root / name}: the file is corrupt or "
                             "different; delete it so it is downloaded again")
        checked.append(name)
    return checked


def _read_idx(path):
    """Return the array stored in an (uncompressed or .gz) IDX file."""
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def _find_raw(root, name, fname):
    for cand in (root / name / "raw" / fname, root / name / "raw" / f"{fname}.gz"):
        if cand.exists():
            return cand
    return None


def _load_raw_images(name, root, download):
    if name not in IMAGE_SETS:
        raise ValueError(f"unknown image data set {name!r}; choose one of {IMAGE_SETS}")
    wanted = [f for pair in _FILES.values() for f in pair]
    if any(_find_raw(root, name, f) is None for f in wanted):
        if not download:
            raise _missing_error(f"{name} files", root / name / "raw", root)
        import torchvision
        cls = getattr(torchvision.datasets, name)
        try:
            for train in (True, False):
                cls(str(root), train=train, download=True)
        except Exception as err:  # noqa: BLE001 - re-raised with a clear message
            raise _missing_error(f"{name} files (download failed: {err})", root / name / "raw",
                                 root) from err
    out = {}
    for split, (img, lab) in _FILES.items():
        out[split] = (_read_idx(_find_raw(root, name, img)), _read_idx(_find_raw(root, name, lab)))
    return out


@dataclass
class ImageData:
    """Flattened image tensors on one device: (x, y) pairs for train, val and test."""
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    name: str = "MNIST"

    def split(self, which):
        """Return (x, y) of 'train', 'val' or 'test'."""
        if which not in ("train", "val", "test"):
            raise ValueError(f"split must be 'train', 'val' or 'test', got {which!r}")
        return getattr(self, f"x_{which}"), getattr(self, f"y_{which}")


def load_images(name="MNIST", data_dir_=None, device="cpu", scale="paper", n_val=10_000,
                n_train=None, n_test=None, download=True, flatten=True):
    """Return ``ImageData`` for MNIST or FashionMNIST, whole sets as tensors on ``device``.

    ``scale``: 'paper' divides pixels by 126 (as the paper), 'unit' by 255. The last ``n_val`` of the
    60,000 training images form the validation set (the paper's 50k/10k split). ``n_train`` and
    ``n_test`` keep only the first images (for quick profiles).
    """
    scales = {"paper": PAPER_PIXEL_SCALE, "unit": 255.0}
    if scale not in scales:
        raise ValueError(f"scale must be one of {sorted(scales)}, got {scale!r}")
    if not 0 <= n_val < 60_000:
        raise ValueError(f"n_val must be in [0, 60000), got {n_val}")
    root = data_dir(data_dir_)
    raw = _load_raw_images(name, root, download)
    (xtr, ytr), (xte, yte) = raw["train"], raw["test"]

    def prep(x, y):
        x = torch.from_numpy(x.astype(np.float32) / scales[scale])
        if flatten:
            x = x.reshape(len(x), -1) if len(x) else x.reshape(0, x.shape[1] * x.shape[2])
        else:
            x = x.unsqueeze(1)
        return x.to(device), torch.from_numpy(y.astype(np.int64)).to(device)

    n_fit = 60_000 - n_val
    x_fit, y_fit = prep(xtr[:n_fit], ytr[:n_fit])
    x_val, y_val = prep(xtr[n_fit:], ytr[n_fit:])
    x_test, y_test = prep(xte, yte)
    if n_train is not None:
        x_fit, y_fit = x_fit[:n_train], y_fit[:n_train]
    if n_test is not None:
        x_test, y_test = x_test[:n_test], y_test[:n_test]
        x_val, y_val = x_val[:n_test], y_val[:n_test]
    return ImageData(x_fit, y_fit, x_val, y_val, x_test, y_test, name=name)


def load_mnist(**kwargs):
    """Return ``load_images('MNIST', **kwargs)``."""
    return load_images("MNIST", **kwargs)


def load_mushroom(data_dir_=None, download=True):
    """Return (features, poisonous) for UCI Mushroom: one-hot float32 features (8124, 117 incl. '?').

    Each of the 22 categorical attributes is one-hot encoded over the values seen in the file, '?'
    being a category of its own. ``poisonous`` is a bool tensor (class 'p').
    """
    root = data_dir(data_dir_)
    path = root / "mushroom" / "agaricus-lepiota.data"
    if not path.exists():
        if not download:
            raise _missing_error("UCI Mushroom data", path, root)
        import urllib.request
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            urllib.request.urlretrieve(MUSHROOM_URL, path)
        except Exception as err:  # noqa: BLE001
            raise _missing_error(f"UCI Mushroom data (download failed: {err})", path, root) from err
    rows = [line.strip().split(",") for line in path.read_text().splitlines() if line.strip()]
    if any(len(r) != 23 for r in rows):
        raise ValueError(f"{path} does not look like agaricus-lepiota.data (23 columns per row)")
    cols = list(zip(*rows))
    poisonous = torch.tensor([c == "p" for c in cols[0]])
    blocks = []
    for col in cols[1:]:
        values = sorted(set(col))
        index = {v: i for i, v in enumerate(values)}
        idx = torch.tensor([index[v] for v in col])
        blocks.append(torch.nn.functional.one_hot(idx, len(values)).float())
    return torch.cat(blocks, dim=1), poisonous


TOY_SETS = ("moons", "circles")


def make_toy_2d(name="moons", n=500, noise=0.2, factor=0.5, seed=0):
    """Return (x float32 (n, 2), y int64 (n,)) of scikit-learn's two-moons or two-circles data.

    Same construction as ``sklearn.datasets.make_moons`` / ``make_circles`` (class 0 = outer
    moon / circle, class 1 = inner; ``factor`` = inner radius of the circles), shuffled, plus
    Gaussian noise of std ``noise``; drawn from its own generator seeded with ``seed``.
    """
    if name not in TOY_SETS:
        raise ValueError(f"unknown toy data set {name!r}; choose one of {TOY_SETS}")
    n = int(n)
    if n < 2 or noise < 0 or not 0 < factor < 1:
        raise ValueError(f"need n >= 2, noise >= 0 and 0 < factor < 1; got {n}, {noise}, {factor}")
    g = torch.Generator().manual_seed(int(seed))
    n_out, n_in = n // 2, n - n // 2
    if name == "moons":
        t_out = torch.linspace(0, np.pi, n_out, dtype=torch.float64)
        t_in = torch.linspace(0, np.pi, n_in, dtype=torch.float64)
        outer = torch.stack([torch.cos(t_out), torch.sin(t_out)], 1)
        inner = torch.stack([1 - torch.cos(t_in), 1 - torch.sin(t_in) - 0.5], 1)
    else:
        t_out = torch.arange(n_out, dtype=torch.float64) * (2 * np.pi / n_out)
        t_in = torch.arange(n_in, dtype=torch.float64) * (2 * np.pi / n_in)
        outer = torch.stack([torch.cos(t_out), torch.sin(t_out)], 1)
        inner = factor * torch.stack([torch.cos(t_in), torch.sin(t_in)], 1)
    x = torch.cat([outer, inner])
    y = torch.cat([torch.zeros(n_out, dtype=torch.long), torch.ones(n_in, dtype=torch.long)])
    perm = torch.randperm(n, generator=g)
    x, y = x[perm], y[perm]
    x = x + noise * torch.randn(x.shape, generator=g, dtype=torch.float64)
    return x.float(), y
