"""Kept for ``views/tiny_gpt.py``, which imports ``text_html`` and ``legend_html`` from here.

The shared helpers now live in small modules by purpose: ``nav`` (the page
list and links), ``widgets`` (pickers, the work check), ``cached`` (cached
library calls), ``lesson_index`` (the lessons and their pages) and
``tokens`` (coloured tokens and event sentences). New code imports those.
"""
from tokens import legend_html, text_html  # noqa: F401
