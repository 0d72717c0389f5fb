"""The analysis plan of Table 1: valid, committed before anything it governs, and the checks
fail on planted violations (a temporary git repository)."""
import copy
import json
import subprocess

import pytest

from helpers import analysis_plan as A

ROOT = A.PROJECT_ROOT


@pytest.fixture(scope="module")
def plan():
    return A.load()


def test_the_committed_plan_is_valid(plan):
    assert A.validate(plan) == []
    assert plan["governs"] and all(g.startswith("results/") for g in plan["governs"])


def _breaks(plan, change, expect):
    p = copy.deepcopy(plan)
    change(p)
    bad = A.validate(p)
    assert any(expect in b for b in bad), (expect, bad)


def test_planted_breaches_of_the_rules_are_found(plan):
    _breaks(plan, lambda p: p["seeds"]["reported"].update({"400": [0, 1, 2]}), "at least 5")
    _breaks(plan, lambda p: p["seeds"]["reported"].update({"800": [0, 1, 12]}), "reserved")
    _breaks(plan, lambda p: p["seeds"].update(tuning=3), "seeds.tuning")
    _breaks(plan, lambda p: p["search"]["spaces"]["bbb_mixture"].update(rho_init=[-6, -5]),
            "bbb_mixture has 24 trials")
    _breaks(plan, lambda p: p["search"]["budget"].pop("1200"), "nothing for 2x1200")
    _breaks(plan, lambda p: p["search"]["early_stopping"].update(asha=True, grace=5), "ASHA")
    _breaks(plan, lambda p: p["controls"]["rows"].pop("sgd_continued"), "sgd_continued")
    _breaks(plan, lambda p: p["search"]["warm_start"].update(init_epochs=60), "leave epochs")
    _breaks(plan, lambda p: p["tests"].update(alpha=0.1), "alpha")
    _breaks(plan, lambda p: p["tests"]["orderings"]["family_per_width"].pop(), "family_per_width")
    _breaks(plan, lambda p: p["tests"]["comparability"].update(margin_pp=0.2), "margin")
    _breaks(plan, lambda p: p.update(governs=[]), "governs")


def _is_repo(path):
    return subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"],
                          capture_output=True).returncode == 0


def test_the_plan_is_committed_before_any_file_it_governs():
    if not _is_repo(ROOT):
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch",
                              str(A.PLAN)], capture_output=True)
    assert tracked.returncode == 0, f"{A.PLAN} is not committed"
    assert A.plan_precedes(ROOT) == []


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for k, v in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@x"), ("GIT_COMMITTER_NAME", "t"),
                 ("GIT_COMMITTER_EMAIL", "t@x"), ("GIT_CONFIG_GLOBAL", "/dev/null"),
                 ("GIT_CONFIG_NOSYSTEM", "1")):
        monkeypatch.setenv(k, v)
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def git(path, *args):
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)


def write(repo, rel, text="{}"):
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def commit(repo, *rels, msg="x"):
    git(repo, "add", *rels)
    git(repo, "commit", "-q", "-m", msg)


PLAN = str(A.PLAN)
GOVERNS = ["results/01_mnist_classification/plan_v1/**"]
RESULT = "results/01_mnist_classification/plan_v1/table1.json"


def _plan(repo):
    write(repo, PLAN, json.dumps({"governs": GOVERNS}))


def test_git_order_check_passes_a_plan_that_came_first(repo):
    write(repo, "README", "x")
    commit(repo, "README")
    assert A.plan_precedes(repo, governs=GOVERNS) == []  # nothing yet
    _plan(repo)
    commit(repo, PLAN)
    assert A.plan_precedes(repo) == []  # plan, nothing governed yet
    write(repo, RESULT)
    commit(repo, RESULT)
    write(repo, "results/01_mnist_classification/table1.json")  # not governed
    commit(repo, "results")
    assert A.plan_precedes(repo) == []


def test_git_order_check_fails_results_before_the_plan(repo):
    write(repo, RESULT)
    commit(repo, RESULT)
    _plan(repo)
    commit(repo, PLAN)
    bad = A.plan_precedes(repo)
    assert len(bad) == 1 and "does not come after the plan" in bad[0] and RESULT in bad[0]


def test_git_order_check_fails_results_committed_with_the_plan(repo):
    _plan(repo)
    write(repo, RESULT)
    commit(repo, PLAN, RESULT)
    assert "committed together with the plan" in A.plan_precedes(repo)[0]


def test_git_order_check_fails_results_without_a_committed_plan(repo):
    write(repo, "README", "x")
    commit(repo, "README")
    write(repo, RESULT)  # on disk only
    _plan(repo)
    assert "is not committed" in A.plan_precedes(repo)[0]


def test_git_order_check_fails_results_from_a_branch_older_than_the_plan(repo):
    write(repo, "README", "x")
    commit(repo, "README")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, RESULT)
    commit(repo, RESULT)  # results on a branch that never saw the plan
    git(repo, "checkout", "-q", "main")
    _plan(repo)
    commit(repo, PLAN)
    git(repo, "merge", "-q", "--no-edit", "side")
    bad = A.plan_precedes(repo)
    assert bad and "does not come after the plan" in bad[0]


def test_notebook_02_plan_is_the_codes_and_came_before_its_verdicts():
    """Notebook 02's committed plan is what helpers.regression.plan declares for the default
    profile (a change is a new version), and git holds it before any verdicts file it governs."""
    import helpers as H
    from helpers import regression as R
    path = ROOT / "results" / R.NB / f"{R.PLAN}.json"
    stored = json.loads(path.read_text())
    assert stored == json.loads(json.dumps(R.plan(H.get_profile(R.NB, "default"))))
    assert all(len(names) == len(set(names)) for names in stored["families"].values())
    if not _is_repo(ROOT):
        pytest.skip("not a git checkout: the git order is not checked")
    assert A.plan_precedes(ROOT, plan=path.relative_to(ROOT)) == []


def test_git_order_check_fails_a_plan_changed_after_its_results(repo):
    _plan(repo)
    commit(repo, PLAN)
    amended = json.loads((repo / PLAN).read_text())
    amended["amended_before_numbers"] = True
    (repo / PLAN).write_text(json.dumps(amended))
    commit(repo, PLAN)  # an amendment before any result: allowed
    assert A.plan_precedes(repo) == []
    write(repo, RESULT)
    commit(repo, RESULT)
    amended["amended_after_numbers"] = True
    (repo / PLAN).write_text(json.dumps(amended))
    commit(repo, PLAN)
    bad = A.plan_precedes(repo)
    assert len(bad) == 1 and "after governed results" in bad[0]
