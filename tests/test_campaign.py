"""helpers.campaign.work: the loop that shares a campaign's jobs between processes."""
import os
import socket
import subprocess
import sys

import pytest

from helpers import campaign


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    return "nb"


def _hold(folder, name, pid):
    path = campaign.claim_path(name, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{socket.gethostname()}:{pid}")
    return path


def test_every_ready_job_runs_once_and_its_claim_is_given_back(folder):
    done, ran = set(), []
    n = campaign.work(lambda: [j for j in "abc" if j not in done],
                      lambda j: (ran.append(j), done.add(j)), folder)
    assert n == 3 and ran == ["a", "b", "c"]
    assert list((campaign.claim_path("a", folder).parent).glob("*.claim")) == []
    # max_jobs stops early; done_fn skips a job another process finished meanwhile
    done.clear()
    assert campaign.work(lambda: [j for j in "abc" if j not in done],
                         lambda j: done.add(j), folder, max_jobs=2) == 2 and done == {"a", "b"}
    assert campaign.work(lambda: ["c"], lambda j: pytest.fail("c is done"), folder,
                         done_fn=lambda j: True) == 0


def test_a_job_held_by_a_live_process_is_left_to_it(folder):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _hold(folder, "a", other.pid)
        ran = []
        done = set()
        assert campaign.work(lambda: [j for j in "ab" if j not in done],
                             lambda j: (ran.append(j), done.add(j)), folder) == 1
        assert ran == ["b"] and campaign.busy(folder)
        # waiting jobs are waited for while that process works, and the loop stops once it ends
        sleeps = []

        def sleep(s):
            sleeps.append(s)
            other.kill()
            other.wait()

        assert campaign.work(lambda: [], lambda j: pytest.fail("nothing is ready"), folder,
                             blocked_fn=lambda: True, poll_s=7, sleep=sleep) == 0
        assert sleeps == [7] and not campaign.busy(folder)
    finally:
        other.kill()


def test_a_dead_processs_claim_is_taken_over_and_a_failing_run_gives_its_claim_back(folder):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = _hold(folder, "a", dead.pid)
    with pytest.raises(RuntimeError, match="boom"):
        campaign.work(lambda: ["a"], lambda j: (_ for _ in ()).throw(RuntimeError("boom")),
                      folder)
    assert not path.exists()
    # with nothing ready and nobody else at work, a blocked campaign does not wait forever
    assert campaign.work(lambda: [], lambda j: None, folder, blocked_fn=lambda: True,
                         sleep=lambda s: pytest.fail("nobody works: no wait")) == 0
    assert os.getpid() and not campaign.busy(folder)
