"""figures/: every committed file is written by some notebook or tool, and the one savefig helper
writes the same bytes when nothing changed (no creation date in the PDF)."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("notebooks", "helpers", "tools")


def module_strings(tree):
    """Return {name: value} of the module-level string assignments (e.g. NB = "01_mnist...")."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            out.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return out


def name_pattern(node, strings):
    """Return a regex for the string an argument node builds: literal parts escaped, the parts an
    f-string fills in (or a name that is not a module-level string) as '.+'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.Name) and node.id in strings:
        return re.escape(strings[node.id])
    if isinstance(node, ast.JoinedStr):
        return "".join(name_pattern(v, strings) if isinstance(v, ast.Constant) else ".+"
                       for v in node.values)
    return ".+"


def savefig_patterns(path):
    """Return regexes of the figure file names that the savefig calls in ``path`` write:
    ``savefig(fig, notebook, name)`` (helpers.plotting: <notebook>-<name>.png/.pdf) and
    ``savefig("literal/path.png")``."""
    tree = ast.parse(path.read_text(), str(path))
    strings = module_strings(tree)
    out = []
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        called = getattr(func, "attr", None) or getattr(func, "id", None)
        if not isinstance(node, ast.Call) or called != "savefig" or not node.args:
            continue
        if len(node.args) >= 3:
            out.append(name_pattern(node.args[1], strings) + "-" + name_pattern(node.args[2], strings)
                       + r"\.(png|pdf)")
        elif isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.append(re.escape(Path(node.args[0].value).name))
    return out


def all_patterns():
    files = [p for d in SOURCES for p in sorted((ROOT / d).glob("*.py"))]
    return {pat: p.relative_to(ROOT).as_posix() for p in files for pat in savefig_patterns(p)}


def test_the_scan_finds_the_figures_built_from_parts(tmp_path):
    script = tmp_path / "09_x.py"
    script.write_text('NB = "09_x"\nfor ds in ("a", "b"):\n    H.savefig(fig, NB, f"priors-{ds}")\n'
                      'H.savefig(fig, NB, "plain")\nplt.savefig("out/loose.png")\n')
    pats = savefig_patterns(script)
    assert [p for p in pats if re.fullmatch(p, "09_x-priors-moons.pdf")]
    assert [p for p in pats if re.fullmatch(p, "09_x-plain.png")]
    assert [p for p in pats if re.fullmatch(p, "loose.png")]
    assert not [p for p in pats if re.fullmatch(p, "09_x-buffer.png")]


def test_every_committed_figure_is_written_by_a_notebook_or_tool():
    patterns = all_patterns()
    assert len(patterns) >= 20, f"found only {len(patterns)} savefig calls: is the scan broken?"
    figures = sorted(p.name for p in (ROOT / "figures").iterdir() if p.is_file())
    orphans = [f for f in figures if not any(re.fullmatch(p, f) for p in patterns)]
    assert not orphans, (f"figures/ holds files that no notebook or tool writes: {orphans}. "
                         "Delete them (git rm), or save them with helpers.savefig(fig, NB, name)")


@pytest.fixture
def figure():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    yield fig
    plt.close(fig)


def test_savefig_writes_the_same_bytes_at_another_time(figure, monkeypatch):
    """matplotlib stamps a PDF with the time (SOURCE_DATE_EPOCH when set) unless the creation date
    is left out: two saves at different 'times' must give the same file."""
    from helpers import savefig
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    first = [p.read_bytes() for p in savefig(figure, "99_test", "stable")]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1000000000")
    second = [p.read_bytes() for p in savefig(figure, "99_test", "stable")]
    assert first == second, "savefig's output changes with the clock: leave the dates out"
    assert b"CreationDate" not in second[1]


def test_show_table_keeps_a_pipe_inside_its_cell():
    from helpers.plotting import show_table
    md = show_table(["ranking", "|μ|"], [["a | b", "1"]])
    lines = md.splitlines()
    # an unescaped '|' would add a column: every line has exactly the header's cell borders
    assert [line.replace("\\|", "").count("|") for line in lines] == [3, 3, 3]
    assert "a \\| b" in lines[2] and "\\|μ\\|" in lines[0]
