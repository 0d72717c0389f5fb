"""Prose that states measured numbers, rendered from results files when a notebook runs."""


def and_list(items, sep=", "):
    """'a', 'a and b', 'a, b and c' (``sep`` between all but the last two)."""
    items = list(items)
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + " and " + items[-1]


def seeds_words(n):
    """'1 seed', '5 seeds'."""
    return f"{n} seed" + ("" if n == 1 else "s")


def cap(text):
    """``text`` with its first letter in upper case."""
    return text[:1].upper() + text[1:]


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
