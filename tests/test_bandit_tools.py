"""tools/bandit_*.py on the smoke profile: the tuning, then the reported runs (each job a process
of its own, through tools/bandit_jobs.py), then the census of their buffers."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import bandit_jobs  # noqa: E402


def _tool(name, *args):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / name), "--profile", "smoke",
                           *args], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def test_tuning_then_reported_runs_then_census(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))  # the children inherit it
    import helpers as H
    tuning = H.get_profile(bandit_jobs.NB, "smoke").tuning
    _tool("bandit_tuning.py", "--workers", "2")
    rec = json.loads((tmp_path / "results" / bandit_jobs.NB / "tuning.json").read_text())
    assert rec["metrics"]["complete"]
    assert len(rec["metrics"]["trials"]) == len(tuning["priors"]) * len(tuning["recipes"])
    out = _tool("bandit_runs.py", "--workers", "2")
    assert "paper seed 0" in out and "keep_all seed 0" in out
    for buffer in ("paper", "keep_all"):
        rep = json.loads((tmp_path / "results" / bandit_jobs.NB / f"reported_{buffer}.json")
                         .read_text())
        assert [r["seed"] for r in rep["metrics"]["per_seed"]] == [0]
    steps = H.get_profile(bandit_jobs.NB, "smoke").steps
    _tool("bandit_window_census.py", "--steps", str(steps), "--last", "20")
    census = json.loads((tmp_path / "results" / bandit_jobs.NB / "window_census.json")
                        .read_text())
    assert {r["buffer"] for r in census["metrics"]["rows"]} == {"paper", "keep_all"}


def test_a_failing_job_names_itself(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nsys.exit('no such setting')\n")
    jobs = bandit_jobs.run_jobs(script, "smoke", [("a",)], workers=1, label=lambda j: f"job {j}")
    with pytest.raises(RuntimeError, match=r"job \('a',\) failed:\nno such setting"):
        list(jobs)
    with pytest.raises(ValueError, match="workers must be"):
        bandit_jobs.run_jobs(script, "smoke", [], workers=0)
