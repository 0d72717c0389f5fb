"""Data sets as in-memory tensors: MNIST / Fashion-MNIST (torchvision layout) and UCI Mushroom.

The data directory is resolved from an argument, then the env variable ``BBB_DATA_DIR``, then
``./data`` under the project. Missing files are downloaded (torchvision / UCI) unless
``download=False``; offline, the error says where files were looked for and how to fix it.

Every load checks what it reads: the IDX header (type, dimensions, item counts of the known sets),
the file size, the label range and the SHA-256 of the published files; the Mushroom file against
the schema of ``agaricus-lepiota.names`` row by row, then its SHA-256. A corrupt, truncated or
swapped file is a ``DataError`` naming the file and saying how to fix it. Downloads go to a
temporary location, are verified, and only then take the final name.
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

# SHA-256 of the published, uncompressed IDX files
IMAGE_SHA256 = {
    "MNIST": {
        "train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
        "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
        "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
        "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
    },
    "FashionMNIST": {
        "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
        "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
        "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
        "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
    },
}
# what each IDX file must hold: item count and the dimensions after it
IDX_DIMS = {"train-images-idx3-ubyte": (60_000, 28, 28), "train-labels-idx1-ubyte": (60_000,),
            "t10k-images-idx3-ubyte": (10_000, 28, 28), "t10k-labels-idx1-ubyte": (10_000,)}
MUSHROOM_SHA256 = "e65d082030501a3ebcbcd7c9f7c71aa9d28fdfff463bf4cf4716a3fe13ac360e"
# agaricus-lepiota.names, section 7: the 22 attributes and their values ('?' = missing)
MUSHROOM_SCHEMA = (
    ("cap-shape", "bcxfks"), ("cap-surface", "fgys"), ("cap-color", "nbcgrpuewy"),
    ("bruises", "tf"), ("odor", "alcyfmnps"), ("gill-attachment", "adfn"),
    ("gill-spacing", "cwd"), ("gill-size", "bn"), ("gill-color", "knbhgropuewy"),
    ("stalk-shape", "et"), ("stalk-root", "bcuezr?"), ("stalk-surface-above-ring", "fyks"),
    ("stalk-surface-below-ring", "fyks"), ("stalk-color-above-ring", "nbcgopewy"),
    ("stalk-color-below-ring", "nbcgopewy"), ("veil-type", "pu"), ("veil-color", "nowy"),
    ("ring-number", "not"), ("ring-type", "ceflnpsz"), ("spore-print-color", "knbhrouwy"),
    ("population", "acnsvy"), ("habitat", "glmpuwd"),
)


class DataError(ValueError):
    """A data file that is corrupt, truncated, swapped or not the published one."""


def data_dir(path=None):
    """Return the data directory: ``path``, else $BBB_DATA_DIR, else <project>/data."""
    chosen = path or os.environ.get("BBB_DATA_DIR") or PROJECT_ROOT / "data"
    return Path(chosen).expanduser().resolve()


def check_labels(y, n_classes=None, name="labels"):
    """Raise ValueError unless ``y`` holds integer class indices in [0, ``n_classes``) (only >= 0
    when ``n_classes`` is None); return ``y``. Training and metrics call it, so a stray label is a
    clear error instead of torch's IndexError (or a silently wrong error rate)."""
    t = torch.as_tensor(y)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise ValueError(f"{name} must be integer class indices, got dtype {t.dtype}: convert "
                         "them with y.long()")
    if t.numel():
        lo, hi = int(t.min()), int(t.max())
        if lo < 0 or (n_classes is not None and hi >= n_classes):
            allowed = ("0 or more" if n_classes is None
                       else f"in 0..{n_classes - 1} ({n_classes} classes)")
            raise ValueError(f"{name} hold labels from {lo} to {hi}; they must be {allowed}: "
                             "number the classes 0, 1, ..., C-1 and give the model C outputs")
    return y


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


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _read_idx(path, name=None, fname=None):
    """Return the array stored in an (uncompressed or .gz) IDX file, after checking its header
    against the known sets (``fname``: which MNIST file it must be), its size, its label range
    and (``name``: MNIST or FashionMNIST) the SHA-256 of the published file."""
    import gzip
    path = Path(path)
    fix = (f"Fix: delete {path} so that it is downloaded again, or put the published file "
           f"there (the data folder is {path.parent.parent.parent}).")
    try:
        if str(path).endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        else:
            raw = path.read_bytes()
    except (OSError, EOFError) as err:
        raise DataError(f"{path} cannot be read ({err}). {fix}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08 or not 1 <= raw[3] <= 4:
        raise DataError(f"{path} is not an IDX file of unsigned bytes (bad header). {fix}")
    ndim = raw[3]
    if len(raw) < 4 + 4 * ndim:
        raise DataError(f"{path} is truncated: its header is incomplete. {fix}")
    dims = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    if fname is not None:
        want = IDX_DIMS[fname]
        if dims != want:
            hint = ""
            if len(dims) == len(want) and dims[1:] == want[1:] and dims[0] != want[0]:
                hint = (f" (it holds {dims[0]:,} items where {fname} has {want[0]:,}: is another "
                        "file of the set, e.g. the test file, in its place?)")
            raise DataError(f"{path} has dimensions {dims}, expected {want}{hint}. {fix}")
    size = 4 + 4 * ndim + int(np.prod(dims))
    if len(raw) != size:
        what = "truncated" if len(raw) < size else "longer than its header says"
        raise DataError(f"{path} is {what}: {len(raw):,} bytes where its header needs {size:,}. "
                        f"{fix}")
    arr = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)
    if ndim == 1 and arr.size and int(arr.max()) > 9:
        raise DataError(f"{path} holds label {int(arr.max())}; labels must be 0-9. {fix}")
    if name is not None and fname is not None:
        if _sha256(raw) != IMAGE_SHA256[name][fname]:
            raise DataError(f"{path} differs from the published {name} file {fname} (SHA-256 "
                            f"mismatch): it is corrupt or modified. {fix}")
    return arr


def _find_raw(root, name, fname):
    for cand in (root / name / "raw" / fname, root / name / "raw" / f"{fname}.gz"):
        if cand.exists():
            return cand
    return None


def _download_images(name, root):
    """Download ``name`` with torchvision into a temporary folder under ``root``, verify every
    file, then move the verified files into ``root/name/raw``."""
    import shutil
    import tempfile

    import torchvision
    cls = getattr(torchvision.datasets, name)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".download-{name}-"))
    try:
        try:
            for train in (True, False):
                cls(str(tmp), train=train, download=True)
        except Exception as err:  # noqa: BLE001 - re-raised with a clear message
            raise _missing_error(f"{name} files (download failed: {err})", root / name / "raw",
                                 root) from err
        final = root / name / "raw"
        final.mkdir(parents=True, exist_ok=True)
        for fname in IDX_DIMS:
            got = tmp / name / "raw" / fname
            _read_idx(got, name, fname)  # verified before it takes the final name
            os.replace(got, final / fname)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load_raw_images(name, root, download, splits=tuple(_FILES)):
    if name not in IMAGE_SETS:
        raise ValueError(f"unknown image data set {name!r}; choose one of {IMAGE_SETS}")
    wanted = [f for split in splits for f in _FILES[split]]
    if any(_find_raw(root, name, f) is None for f in wanted):
        if not download:
            raise _missing_error(f"{name} files", root / name / "raw", root)
        _download_images(name, root)
    out = {}
    for split in splits:
        img, lab = _FILES[split]
        out[split] = (_read_idx(_find_raw(root, name, img), name, img),
                      _read_idx(_find_raw(root, name, lab), name, lab))
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


def _pixel_divisor(scale):
    scales = {"paper": PAPER_PIXEL_SCALE, "unit": 255.0}
    if scale not in scales:
        raise ValueError(f"scale must be one of {sorted(scales)}, got {scale!r}")
    return scales[scale]


def load_images(name="MNIST", data_dir_=None, device="cpu", scale="paper", n_val=10_000,
                n_train=None, n_test=None, download=True, flatten=True):
    """Return ``ImageData`` for MNIST or FashionMNIST, whole sets as tensors on ``device``.

    ``scale``: 'paper' divides pixels by 126 (as the paper), 'unit' by 255. The last ``n_val`` of the
    60,000 training images form the validation set (the paper's 50k/10k split). ``n_train`` and
    ``n_test`` keep only the first images (for quick profiles).
    """
    divisor = _pixel_divisor(scale)
    if not 0 <= n_val < 60_000:
        raise ValueError(f"n_val must be in [0, 60000), got {n_val}")
    root = data_dir(data_dir_)
    raw = _load_raw_images(name, root, download)
    (xtr, ytr), (xte, yte) = raw["train"], raw["test"]

    def prep(x, y):
        x = torch.from_numpy(x.astype(np.float32) / divisor)
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


def load_test_images(name="MNIST", data_dir_=None, device="cpu", scale="paper",
                     download=True):
    """Return (x, y): the test set of ``name`` alone, as ``load_images`` makes it (its training
    files are neither needed nor read: e.g. FashionMNIST as an out-of-domain set)."""
    divisor = _pixel_divisor(scale)
    x, y = _load_raw_images(name, data_dir(data_dir_), download, splits=("test",))["test"]
    x = torch.from_numpy(x.astype(np.float32) / divisor).reshape(len(x), -1)
    return x.to(device), torch.from_numpy(y.astype(np.int64)).to(device)


def load_mnist(**kwargs):
    """Return ``load_images('MNIST', **kwargs)``."""
    return load_images("MNIST", **kwargs)


def _parse_mushroom(path, text):
    """Return (rows, poisonous) of agaricus-lepiota.data after checking every row against the
    schema of agaricus-lepiota.names; a DataError names the first bad row and value."""
    fix = (f"Fix: delete {path} so that it is downloaded again, or put the published UCI file "
           "there.")
    rows, poisonous = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        values = line.strip().split(",")
        if len(values) != 23:
            raise DataError(f"{path}, row {number}: {len(values)} comma-separated values where "
                            f"agaricus-lepiota.data has 23 (the class, then 22 attributes). {fix}")
        if values[0] not in ("e", "p"):
            raise DataError(f"{path}, row {number}: class {values[0]!r} is not 'e' (edible) or "
                            f"'p' (poisonous). {fix}")
        for (attr, allowed), v in zip(MUSHROOM_SCHEMA, values[1:]):
            if len(v) != 1 or v not in allowed:
                raise DataError(f"{path}, row {number}: {attr} = {v!r} is not one of the values "
                                f"of agaricus-lepiota.names ({', '.join(allowed)}). {fix}")
        rows.append(values[1:])
        poisonous.append(values[0] == "p")
    if not rows:
        raise DataError(f"{path} holds no rows. {fix}")
    return rows, poisonous


def _download_mushroom(path, root):
    """Download the UCI file to a temporary name beside ``path``, verify it, then rename it."""
    import tempfile
    import urllib.request
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".download")
    os.close(fd)
    try:
        try:
            urllib.request.urlretrieve(MUSHROOM_URL, tmp)
        except Exception as err:  # noqa: BLE001
            raise _missing_error(f"UCI Mushroom data (download failed: {err})", path,
                                 root) from err
        data = Path(tmp).read_bytes()
        if _sha256(data) != MUSHROOM_SHA256:
            raise DataError(f"the downloaded {MUSHROOM_URL} differs from the published file "
                            "(SHA-256 mismatch); nothing was written. Try again, or put the file "
                            f"at {path} by hand.")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_mushroom(data_dir_=None, download=True, verify=True):
    """Return (features, poisonous) for UCI Mushroom: one-hot float32 features (8124, 117 incl. '?').

    Each of the 22 categorical attributes is one-hot encoded over the values seen in the file, '?'
    being a category of its own. ``poisonous`` is a bool tensor (class 'p'). Every row is checked
    against the schema of ``agaricus-lepiota.names``; with ``verify`` the file must also be the
    published one (SHA-256), so the encoding always has the same 117 columns.
    """
    root = data_dir(data_dir_)
    path = root / "mushroom" / "agaricus-lepiota.data"
    if not path.exists():
        if not download:
            raise _missing_error("UCI Mushroom data", path, root)
        _download_mushroom(path, root)
    raw = path.read_bytes()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise DataError(f"{path} is not a text file of ASCII letters: it is corrupt. Fix: delete "
                        "it so that it is downloaded again.") from None
    rows, pois = _parse_mushroom(path, text)
    if verify and _sha256(raw) != MUSHROOM_SHA256:
        raise DataError(f"{path} follows the schema but differs from the published UCI file "
                        f"(SHA-256 mismatch; {len(rows)} rows): it is modified or incomplete. Fix: "
                        "delete it so that it is downloaded again, or pass verify=False to use "
                        "your own file on purpose.")
    cols = list(zip(*rows))
    poisonous = torch.tensor(pois)
    blocks = []
    for col in cols:
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
