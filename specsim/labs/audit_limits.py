"""The audit's limits and defaults, in a module light enough for ``specsim --help`` (no numpy, no scipy).

``specsim.labs.audit`` (the judge) and ``specsim.cli.audit_cmds`` (the options) both read them here.
"""
ALPHA = 1e-3  # the default false-alarm rate
MAX_SAMPLES = 100_000  # runs of one audit
MAX_JOINT, MAX_TOKENS = 3, 200  # K judged jointly; K judged token by token
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 8192, 1024, 65536  # the engine's address space (torch: ~2 GB)
EXACT_LIMIT = 200_000  # count vectors an exact p-value enumerates at most (about a second of numpy)
