"""Progress bars for long commands: tqdm's when it is installed, none otherwise.

tqdm comes with the ``train`` extra; the numpy-only core (``pip install bgai``) plays, evaluates and analyses
exported models without it, so a missing tqdm means no bar rather than an ImportError.
"""
from __future__ import annotations

from typing import Any


def progress_bar(**kwargs: Any) -> Any | None:
    """A ``tqdm.tqdm(**kwargs)`` bar, or ``None`` when tqdm is not installed (callers skip their updates)."""
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:
        return None
    return tqdm(**kwargs)
