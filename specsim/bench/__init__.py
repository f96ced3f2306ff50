"""Benchmarks of the toy engines and the timing helper they share."""
