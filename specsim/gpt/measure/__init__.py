"""Measuring the tiny GPT: benchmarks, peer comparison, the self-check."""
