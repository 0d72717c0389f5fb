"""environment.yml (conda) and pyproject.toml (pip) must list the same dependencies and ranges."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDA_NAMES = {"pytorch": "torch"}


def _split(spec):
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+(?:\[[^\]]+\])?)\s*(.*)$", spec)
    return m.group(1).lower(), m.group(2).replace(" ", "")


def pip_deps():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    specs = meta["dependencies"] + extras["dev"] + extras["sweep"]
    return dict(_split(s) for s in specs)


def conda_deps():
    deps, in_deps = {}, False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if not line.startswith(" "):
            in_deps = line.startswith("dependencies:")
            continue
        m = in_deps and re.match(r"^\s*-\s+([^#\s][^#]*)$", line)
        if not m or ":" in m.group(1):
            continue
        name, rng = _split(m.group(1))
        if name in ("python", "pip"):
            continue
        deps[CONDA_NAMES.get(name, name)] = rng
    return deps


def test_same_packages_and_ranges():
    assert pip_deps() == conda_deps()


def test_installed_torch_satisfies_range():
    import torch
    rng = pip_deps()["torch"]
    lo = re.search(r">=([\d.]+)", rng).group(1)
    hi = re.search(r"<([\d.]+)", rng).group(1)
    ver = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    assert tuple(int(p) for p in lo.split(".")[:2]) <= ver < tuple(int(p) for p in hi.split(".")[:2])
