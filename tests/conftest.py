import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
SHARED = (ROOT.parent / "shared" / "data").resolve()


@pytest.fixture(autouse=True)
def _seed_and_dirs(tmp_path, monkeypatch):
    """Each test starts from seed 0 and writes figures/results/checkpoints under tmp_path."""
    torch.manual_seed(0)
    monkeypatch.setenv("BBB_FIGURES_DIR", str(tmp_path / "figures"))
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    monkeypatch.setenv("BBB_QUIET", "1")
    import helpers.utils
    monkeypatch.setattr(helpers.utils, "_ACTIVE_PROFILE", None)  # get_profile sets it


@pytest.fixture(scope="session")
def shared_data():
    """The shared data directory (BBB_DATA_DIR or ../shared/data); skip if neither exists."""
    path = Path(os.environ.get("BBB_DATA_DIR") or SHARED)
    if not (path / "MNIST" / "raw").exists():
        pytest.skip(f"no shared data at {path}")
    return path


@pytest.fixture
def committed(monkeypatch):
    """Notebook 01's committed summaries (paper protocol, Adam recipe), read never written, with
    results_dir() on the committed results for the readers of run records: (the paper
    protocol's default settings, its summary, plan v1's summary)."""
    import json
    from pathlib import Path

    from helpers import paper_protocol as P
    results = Path(__file__).resolve().parent.parent / "results" / "01_mnist_classification"
    paper, plan = results / "paper_protocol" / "summary.json", results / "plan_v1" / "summary.json"
    if not paper.exists() or not plan.exists():
        pytest.skip("no committed summaries")
    monkeypatch.setenv("BBB_RESULTS_DIR", str(results.parent))
    return (P.settings("default"), json.loads(paper.read_text()), json.loads(plan.read_text()))
