"""The one place figures are written: ``figures/<notebook>-<name>.png`` and ``.pdf``."""
import matplotlib

from .utils import figures_dir

PAPER_STYLE = {"figure.dpi": 100, "savefig.dpi": 150, "axes.grid": True, "grid.alpha": 0.3,
               "axes.spines.top": False, "axes.spines.right": False, "font.size": 10}


def use_style():
    """Apply the project's matplotlib style (seaborn ticks + a light grid)."""
    import seaborn as sns
    sns.set_theme(style="ticks", context="notebook")
    matplotlib.rcParams.update(PAPER_STYLE)


def savefig(fig, notebook, name, formats=("png", "pdf")):
    """Save ``fig`` as figures/<notebook>-<name>.<fmt> for each format; return the list of paths.

    Metadata that changes between runs (creation date, software version) is left out so that
    regenerated figures only differ when their content does.
    """
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / f"{notebook}-{name}.{fmt}"
        meta = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
        fig.savefig(path, bbox_inches="tight", metadata=meta)
        paths.append(path)
    return paths
