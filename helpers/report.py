"""Prose that states measured numbers, rendered from results files when a notebook runs."""


def show_markdown(text):
    """Show ``text`` as Markdown in a notebook (plain text elsewhere); return it."""
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
        if get_ipython() is not None:
            display(Markdown(text))
            return text
    except ImportError:
        pass
    print(text)
    return text
