"""The tiny GPT pair: real speculative decoding in PyTorch, opened up.

This sub-package is the only part of specsim that imports torch, and only
when a torch module is used: ``from specsim.gpt import specs`` stays cheap
(drafter and rule names). The app-facing functions are re-exported lazily from
``specsim.gpt.api``: ``load_pair``, ``speculative_generate``,
``plain_generate``, ``resolve_device``. See ``specsim/gpt/README.md``.
"""
_API = ("load_pair", "speculative_generate", "plain_generate", "resolve_device")


def __getattr__(name):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'specsim.gpt' has no attribute {name!r}")
