"""The analysis plan of notebook 01's Table 1: read it, check it, and check that it came first.

results/01_mnist_classification/analysis_plan.json declares, before a rerun, its cells, seeds,
equal search budgets, controls, predictor rule, tests, alpha, Holm family, comparability margin
and verdict words (``validate`` lists what breaks the project's rules). ``plan_precedes`` asks git
whether the plan was committed before any results file it governs: a plan written after the
numbers is not a plan.
"""
import json
import math
import subprocess
from pathlib import Path

from .utils import PROJECT_ROOT

NB = "01_mnist_classification"
PLAN = Path("results") / NB / "analysis_plan.json"  # relative to the repository
METHODS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
WIDTHS = (400, 800, 1200)
MIN_SEEDS = {400: 5, 800: 3, 1200: 5}
FAMILY = ("bbb_mixture < bbb_gaussian", "bbb_mixture < sgd", "dropout < sgd")


def plan_path(root=None):
    """Return the path of the committed plan (under the project, not BBB_RESULTS_DIR)."""
    return Path(root or PROJECT_ROOT) / PLAN


def _space_size(space):
    return math.prod(len(v) for v in space.values())


def validate(plan):
    """Return the list of the plan's breaches of the project's rules (empty: a valid plan)."""
    bad = []
    if plan.get("version") != 1:
        bad.append(f"version must be 1, is {plan.get('version')!r}")
    if not plan.get("governs"):
        bad.append("governs: no results paths (the git-order check would have nothing to guard)")
    cells = plan.get("cells", {})
    if tuple(cells.get("methods", ())) != METHODS:
        bad.append(f"cells.methods must be {list(METHODS)}")
    if tuple(cells.get("widths", ())) != WIDTHS:
        bad.append(f"cells.widths must be {list(WIDTHS)}")
    seeds = plan.get("seeds", {})
    reported = seeds.get("reported", {})
    for H in WIDTHS:
        s = reported.get(str(H), [])
        if len(set(s)) < MIN_SEEDS[H]:
            bad.append(f"seeds at 2x{H}: {len(set(s))} distinct, at least {MIN_SEEDS[H]} needed")
        if any(not isinstance(x, int) or not 0 <= x <= 9 for x in s):
            bad.append(f"seeds at 2x{H}: reported seeds must be 0-9 (>= 10 are reserved), got {s}")
    tuning = seeds.get("tuning")
    if not isinstance(tuning, int) or tuning < 10:
        bad.append(f"seeds.tuning must be a seed >= 10 (never reported), got {tuning!r}")
    search = plan.get("search", {})
    budget, spaces = search.get("budget", {}), search.get("spaces", {})
    if set(spaces) != set(METHODS):
        bad.append(f"search.spaces must declare {list(METHODS)}, declares {sorted(spaces)}")
    sizes = {m: _space_size(spaces[m]) for m in METHODS if m in spaces}
    asha = search.get("early_stopping", {}).get("asha")
    for H in WIDTHS:
        b = budget.get(str(H))
        if not b:
            bad.append(f"search.budget: nothing for 2x{H}")
            continue
        for m, n in sizes.items():  # the same space at every width: one trial count per method
            if n != b.get("trials"):
                bad.append(f"search at 2x{H}: {m} has {n} trials, the budget says {b.get('trials')}"
                           " (every method the same number)")
        if asha is not False:
            grace = search.get("early_stopping", {}).get("grace")
            if b.get("trials", 0) <= 16 or grace is None or grace < b["max_epochs"] / 3:
                bad.append(f"search at 2x{H}: ASHA only on grids over 16 trials, with a grace "
                           f"period >= max_epochs / 3 ({b['max_epochs'] / 3:g}); got {grace}")
    warm = search.get("warm_start", {})
    if any("warm" in s.get("start", []) for s in spaces.values()):
        if not warm.get("init_epochs") or "counts_in_budget" not in warm:
            bad.append("search.warm_start: init_epochs and how they count in the budget")
        elif any(warm["init_epochs"] >= budget[str(H)]["max_epochs"] for H in WIDTHS
                 if str(H) in budget):
            bad.append("search.warm_start: init_epochs must leave epochs for BBB in max_epochs")
        rows = plan.get("controls", {}).get("rows", {})
        for row in ("warm_start_source", "sgd_continued", "bbb_random_start"):
            if row not in rows:
                bad.append(f"controls.rows: {row} missing (a warm start needs its source row and "
                           "both same-epoch controls)")
    if not plan.get("predictor"):
        bad.append("predictor: no rule")
    tests = plan.get("tests", {})
    if tests.get("alpha") != 0.05 or tests.get("two_sided") is not True:
        bad.append("tests: alpha 0.05, two-sided")
    orderings = tests.get("orderings", {})
    if tuple(orderings.get("family_per_width", ())) != FAMILY:
        bad.append(f"tests.orderings.family_per_width must be {list(FAMILY)}")
    if "holm" not in orderings.get("correction", "").lower():
        bad.append("tests.orderings.correction: Holm over the family")
    comp = tests.get("comparability", {})
    if comp.get("margin_pp") != 0.1 or comp.get("pair") != "bbb_mixture vs dropout":
        bad.append("tests.comparability: bbb_mixture vs dropout, margin 0.1 pp")
    words = plan.get("verdict_words", {})
    if "holds" not in words.get("ordering", []) or "matches the paper" not in words.get("cell", []):
        bad.append("verdict_words: the ordering and cell words")
    if not plan.get("mc_noise"):
        bad.append("mc_noise: how MC evaluation noise is reported")
    return bad


def load(path=None):
    """Return the plan (ValueError listing every breach when it is not a valid plan)."""
    path = Path(path) if path else plan_path()
    plan = json.loads(path.read_text())
    bad = validate(plan)
    if bad:
        raise ValueError(f"{path} is not a valid analysis plan:\n- " + "\n- ".join(bad))
    return plan


# ---- the plan before its results: git order ----------------------------------------------

def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def _commits(repo, pathspecs):
    """Return the commits of HEAD's history touching ``pathspecs``, oldest first (every one:
    --full-history keeps side branches that a merge made look unchanged)."""
    if subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", "HEAD"],
                      capture_output=True).returncode:
        return []  # no commit yet
    return _git(repo, "log", "--full-history", "--format=%H", "--reverse", "HEAD", "--",
                *pathspecs).split()


def _is_ancestor(repo, a, b):
    return subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", a, b],
                          capture_output=True).returncode == 0


def _on_disk(repo, governs):
    """Files in the work tree matching the patterns (``dir/**``: everything below ``dir``)."""
    found = set()
    for g in governs:
        for pattern in [g] + ([g + "/*"] if g.endswith("**") else []):
            found |= {str(p.relative_to(repo)) for p in repo.glob(pattern) if p.is_file()}
    return sorted(found)


def plan_precedes(repo, plan=PLAN, governs=None):
    """Return the violations of "the plan is committed before any results file it governs".

    ``governs``: glob patterns relative to the repository (default: the plan's own list). A
    governed file committed in the same commit as the plan, in a commit that does not descend
    from the plan's first commit, or present on disk while the plan is not committed at all,
    is a violation, and so is a commit that changes the plan after a governed result (a change
    after numbers is a new plan version). Nothing governed yet: no violation.
    """
    repo = Path(repo)
    if governs is None:
        governs = json.loads((repo / plan).read_text())["governs"]
    specs = [f":(glob){g}" for g in governs]
    plan_commits = _commits(repo, [str(plan)])
    result_commits = _commits(repo, specs)
    out = []
    if not plan_commits:
        on_disk = _on_disk(repo, governs)
        if on_disk or result_commits:
            out.append(f"{plan} is not committed, but governed results exist: "
                       f"{(on_disk + [c[:10] for c in result_commits])[:5]}")
        return out
    first = plan_commits[0]
    for c in result_commits:
        files = _git(repo, "show", "--name-only", "--format=", c, "--", *specs).split()
        if c == first:
            out.append(f"{files} committed together with the plan ({c[:10]}): the plan must "
                       "come first")
        elif not _is_ancestor(repo, first, c):
            out.append(f"{files} committed in {c[:10]}, which does not come after the plan's "
                       f"first commit {first[:10]}")
    # an amendment of the plan after a governed result exists is a new version, not an edit
    for p in plan_commits[1:]:
        late = [c for c in result_commits if c != p and not _is_ancestor(repo, p, c)]
        if late and any(_is_ancestor(repo, c, p) for c in late):
            out.append(f"{plan} changed in {p[:10]}, after governed results ({late[0][:10]}): "
                       "a change after numbers is a new plan version")
    return out
