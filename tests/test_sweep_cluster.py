"""The cluster path of the README, end to end: `ray start --head`, then `RAY_ADDRESS=auto` and
the sweep tool (what `make sweep` runs). The head runs in namespaces of its own (network: it
binds loopback only, and nothing outside can reach it; PID and mount: `ray stop` there sees, and
stops, only this head) with its own temporary folder (RAY_TMPDIR: its sockets, logs and the
address file that `auto` reads). The smoke profile declares the local executor; RAY_ADDRESS must
send the sweep to the cluster anyway, and the results file must say so."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PORT = 6390  # free by construction: the namespace has its own network stack
NAMESPACES = (["unshare", "-n", "-p", "--mount-proc", "--kill-child"],  # root
              ["unshare", "-r", "-n", "-p", "--mount-proc", "--kill-child"])  # user namespaces
NOTEBOOK, SWEEP = "01_mnist_classification", "bbb_gaussian_h50"  # smoke: two trials


def _namespace():
    """Return the unshare prefix that works here, or None."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    for prefix in NAMESPACES:
        probe = subprocess.run([*prefix, "bash", "-c", "ip link set lo up"], capture_output=True)
        if probe.returncode == 0:
            return prefix
    return None


def _ray_cli():
    here = Path(sys.executable).with_name("ray")
    return str(here) if here.exists() else shutil.which("ray")


def _processes_mentioning(text):
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if text.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def test_a_sweep_runs_on_a_ray_cluster_started_with_ray_start(shared_data, tmp_path):
    pytest.importorskip("ray")
    prefix = _namespace()
    if prefix is None:
        pytest.skip("`unshare -n -p` (a network and PID namespace of its own) is not permitted "
                    "here: the test starts a Ray head only where nothing outside can reach it")
    ray = _ray_cli()
    if ray is None:
        pytest.skip("the `ray` command is not installed (pip install -e '.[sweep]')")
    ray_tmp = tempfile.mkdtemp(prefix="bbbray", dir="/tmp")  # short: Ray's socket paths
    env = {**os.environ, "BBB_DATA_DIR": str(shared_data), "BBB_QUIET": "1",
           "BBB_RESULTS_DIR": str(tmp_path / "results"),
           "BBB_CHECKPOINT_DIR": str(tmp_path / "checkpoints"),
           "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT), "RAY_TMPDIR": ray_tmp}
    for key in ("RAY_ADDRESS", "BBB_SWEEP_EXECUTOR"):
        env.pop(key, None)
    script = f"""
set -u
ip link set lo up
for try in 1 2; do  # a head that times out starting on a loaded machine gets one more try
    {ray} start --head --node-ip-address=127.0.0.1 --port={PORT} --num-cpus=2 \\
        --include-dashboard=false --disable-usage-stats >>{tmp_path}/head.log 2>&1
    head=$?
    [ $head -eq 0 ] && break
    {ray} stop --force >>{tmp_path}/stop.log 2>&1
    sleep 5
done
rc=$head
if [ $head -eq 0 ]; then
    RAY_ADDRESS=auto {sys.executable} tools/run_sweeps.py --profile smoke \\
        --only 01 --names {SWEEP}
    rc=$?
fi
{ray} stop >{tmp_path}/stop.log 2>&1
echo "head $head sweep $rc stop $?"
exit $rc
"""
    proc = subprocess.Popen([*prefix, "bash", "-c", script], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # unshare's child, the namespace's init, dies too
        out, _ = proc.communicate()
        pytest.fail(f"the cluster sweep took more than 420 s:\n{out[-3000:]}")
    finally:
        left = _processes_mentioning(ray_tmp)
        shutil.rmtree(ray_tmp, ignore_errors=True)
    logs = "\n".join(p.read_text()[-1500:] for p in (tmp_path / "head.log", tmp_path / "stop.log")
                     if p.exists())
    assert proc.returncode == 0, logs + "\n---- the sweep ----\n" + out[-5000:]
    assert "head 0 sweep 0 stop 0" in out, out[-2000:]
    assert not left, f"processes of the head are still running: {left}"
    rec = json.loads((tmp_path / "results" / NOTEBOOK / "sweep" / f"{SWEEP}.json").read_text())
    assert rec["profile"] == "smoke" and rec["metrics"]["complete"]
    assert rec["config"]["executor"] == "ray" and rec["config"]["executor_from"] == "$RAY_ADDRESS"
    assert rec["config"]["scheduler"]["name"] == "ASHA"
    assert rec["cluster"] == "auto" and rec["ray"]  # what the user asked for; then what it was
    cluster = rec["ray_cluster"]
    assert cluster["address"] == f"127.0.0.1:{PORT}" and cluster["nodes"] == 1
    assert cluster["cpus"] == 2
    trials = rec["metrics"]["trials"]
    assert len(trials) == 2 and all(t["error"] is None and t["epochs_run"] >= 1 for t in trials)
    assert rec["config"]["warm_start_sources"]  # the warm-started trial's source, in the driver
    assert "test_error" not in json.dumps(rec)
    # Ray's per-trial storage under the run's own (git-ignored) checkpoint folder
    assert list((tmp_path / "checkpoints" / "ray" / NOTEBOOK).rglob("events.out.tfevents*"))
    assert f"complete on ray (1 node(s) at 127.0.0.1:{PORT})" in out
