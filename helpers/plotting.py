"""The one place figures are written: ``figures/<notebook>-<name>.png`` and ``.pdf``."""
import matplotlib

from .utils import figures_dir

PAPER_STYLE = {"figure.dpi": 100, "savefig.dpi": 150, "axes.grid": True, "grid.alpha": 0.3,
               "axes.spines.top": False, "axes.spines.right": False, "font.size": 10}


def use_style():
    """Apply the project's matplotlib style (seaborn ticks + a light grid; seaborn's colour-blind
    palette as the default colour cycle)."""
    import seaborn as sns
    sns.set_theme(style="ticks", context="notebook", palette="colorblind")
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


def percent_axis(ax, axis="y", decimals=1):
    """Label ``axis`` of ``ax`` in plain percent (values are fractions): 1.5%, not 1.5×10⁻²."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
    target = ax.yaxis if axis == "y" else ax.xaxis
    log = (ax.get_yscale() if axis == "y" else ax.get_xscale()) == "log"
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0))
                             if log else MaxNLocator(nbins=6))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.{decimals}f}%"))
    if log:
        target.set_minor_formatter(NullFormatter())


def show_table(header, rows, floatfmt=None):
    """Show a table: rendered Markdown in a notebook, aligned plain text elsewhere.

    ``rows`` are lists of already formatted strings (or numbers, formatted with ``floatfmt``); a
    '|' inside a header or cell is escaped, so it stays inside its cell."""
    cells = [[(floatfmt.format(v) if floatfmt and isinstance(v, float) else str(v)) for v in r]
             for r in rows]

    def cell(x):  # a '|' inside a cell (|μ|, "a | b") would end the cell: escape it
        return str(x).replace("\\|", "|").replace("|", "\\|")
    md = "| " + " | ".join(map(cell, header)) + " |\n|" + "---|" * len(header) + "\n"
    md += "\n".join("| " + " | ".join(map(cell, r)) + " |" for r in cells)
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
        if get_ipython() is not None:
            display(Markdown(md))
            return md
    except ImportError:
        pass
    widths = [max(len(str(x)) for x in col) for col in zip(header, *cells)]
    for r in [header] + cells:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)))
    return md
