"""Experiments on rules: pitfalls, lossy cousins, the family, the rule checker and its sandbox, scheme comparison."""
