"""The tiny GPT pair: real speculative decoding in PyTorch, opened up.

This sub-package is the only part of specsim that imports torch (except
``masks``, which needs numpy only, so the app can draw mask grids cheaply).
The public API is re-exported lazily from ``specsim.gpt.api``.
"""
