"""Serving: the roofline cost of a model pair on real hardware, and when speculation stops paying.

- ``models``: model shapes (Llama 3 8B / 70B, Llama 3.2 1B / 3B, an EAGLE
  head, the mixture-of-experts Qwen3-30B-A3B and its drafter Qwen3-0.6B, the
  shipped tiny pair), each cited, with the bytes and FLOPs of a pass;
- ``moe``: the experts a pass over n tokens reads (their expected union,
  exactly, under uniform routing);
- ``hardware``: H100 SXM, H200, A100 80 GB, RTX 4090 (datasheet figures) and
  "this CPU" (``measure_cpu``, or ``cpu_from`` measured figures);
- ``roofline``: ``step_cost`` of one forward pass, ``serving_point`` (c, v,
  tokens per round and speedup of one scheme), ``best_gamma``,
  ``serving_table`` and ``crossover_batch``;
- ``latency``: what a serving benchmark reports, plain and speculative, per
  batch (``latency_table``): time to first token (TTFT), time per output
  token (TPOT), inter-token latency per streamed chunk (ITL), the gaps'
  tail, throughput, requests per second, and ``goodput`` under latency
  targets.

Pure Python: numpy is imported only inside ``measure_cpu``.

>>> from specsim.serving import serving_point
>>> p = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", batch=1, context=1024, alpha=0.8, scheme=4)
>>> p.target.bound, round(p.c, 3), round(p.v, 4), round(p.speedup, 2)
('memory', 0.169, 1.0, 2.01)
"""
from .hardware import HARDWARE, Hardware, cpu_from, hardware_named, measure_cpu, tensor_parallel
from .latency import (Goodput, LatencyRow, gap_distribution, gap_quantile, goodput, latency_point, latency_table,
                      tokens_distribution, within)
from .models import MODELS, ModelShape, model_named
from .moe import ROUTINGS, expected_experts, expected_experts_with, experts_read, union_bounds
from .roofline import (ServingPoint, ServingRow, StepCost, best_gamma, crossover_batch, max_batch, memory_needed,
                       serving_point, serving_table, speedup_grid, step_cost)

__all__ = ["Goodput", "HARDWARE", "Hardware", "LatencyRow", "MODELS", "ModelShape", "ROUTINGS", "ServingPoint",
           "ServingRow", "StepCost", "best_gamma", "cpu_from", "crossover_batch", "expected_experts",
           "expected_experts_with", "experts_read", "gap_distribution", "gap_quantile", "goodput", "hardware_named",
           "latency_point", "latency_table", "max_batch", "measure_cpu", "memory_needed", "model_named",
           "serving_point", "serving_table", "speedup_grid", "step_cost", "tensor_parallel", "tokens_distribution",
           "union_bounds", "within"]
