"""Hardware for the roofline: memory bandwidth, peak FLOP rate per dtype, a per-step overhead.

Every figure is the vendor's datasheet peak (dense: the "with sparsity"
figures are halved), so a roofline time is a lower bound: real decoding
reaches perhaps 70-90 % of the bandwidth and less of the FLOP rate. The
per-step overhead (kernel launches, synchronisation, sampling) is not on any
datasheet: the GPU presets assume 20 µs per forward pass (a CUDA-graph
captured step), to be replaced by a measured figure with
``dataclasses.replace``. ``measure_cpu`` measures "this CPU"; ``cpu_from``
builds one from figures measured elsewhere.

>>> hw = HARDWARE["h100-sxm"]
>>> hw.bandwidth_bytes_per_s / 1e12, hw.peak("bf16") / 1e12
(3.35, 989.5)
>>> round(hw.ridge("bf16"))  # FLOPs per byte above which a pass is compute-bound
295
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .models import preset

GPU_OVERHEAD_S = 20e-6  # assumed per forward pass, see the module docstring


@dataclass(frozen=True)
class Hardware:
    """One accelerator: bandwidth (bytes/s), peak FLOP/s by dtype, overhead per step (s), memory (bytes)."""

    name: str
    bandwidth_bytes_per_s: float
    peak_flops: dict = field(hash=False)
    step_overhead_s: float
    source: str
    memory_bytes: float | None = None  # None: not checked
    # True: memory traffic and arithmetic overlap, a pass takes the longer of the two (a GPU's many SMs);
    # False: they take turns, a pass takes their sum (one CPU core streaming the weights of small matmuls)
    overlap: bool = True

    def __post_init__(self):
        if not self.bandwidth_bytes_per_s > 0:
            raise ValueError(f"{self.name}: bandwidth must be > 0, got {self.bandwidth_bytes_per_s}")
        if not self.peak_flops or not all(v > 0 for v in self.peak_flops.values()):
            raise ValueError(f"{self.name}: every peak FLOP rate must be > 0, got {self.peak_flops}")
        if not self.step_overhead_s >= 0:
            raise ValueError(f"{self.name}: step overhead must be >= 0 s, got {self.step_overhead_s}")

    def peak(self, dtype: str) -> float:
        """Peak FLOP/s for ``dtype``; a one-line ValueError naming the dtypes it has."""
        if dtype not in self.peak_flops:
            raise ValueError(f"{self.name} has no {str(dtype)[:20]!r} figure: it has {', '.join(self.peak_flops)}")
        return self.peak_flops[dtype]

    def ridge(self, dtype: str) -> float:
        """The roofline's ridge point: peak FLOP/s / bandwidth, in FLOPs per byte."""
        return self.peak(dtype) / self.bandwidth_bytes_per_s


def _gpu(name, tb_s, tflops, gb, source):
    return Hardware(name, tb_s * 1e12, {k: v * 1e12 for k, v in tflops.items()}, GPU_OVERHEAD_S,
                    source + f"; step overhead {GPU_OVERHEAD_S * 1e6:g} µs assumed, not a datasheet figure",
                    gb * 1e9)


HARDWARE = {h.name: h for h in (
    _gpu("h100-sxm", 3.35, {"bf16": 989.5, "fp16": 989.5, "fp8": 1979}, 80,
         "NVIDIA H100 Tensor Core GPU datasheet, SXM5 80 GB: 3.35 TB/s HBM3; BF16/FP16 tensor 1,979 and FP8 "
         "3,958 TFLOPS with sparsity, halved for dense"),
    _gpu("h200", 4.8, {"bf16": 989.5, "fp16": 989.5, "fp8": 1979}, 141,
         "NVIDIA H200 Tensor Core GPU datasheet, SXM 141 GB: 4.8 TB/s HBM3e; BF16/FP16 tensor 1,979 and FP8 "
         "3,958 TFLOPS with sparsity, halved for dense (the H100's compute)"),
    _gpu("a100-80gb", 2.039, {"bf16": 312, "fp16": 312}, 80,
         "NVIDIA A100 Tensor Core GPU datasheet, 80 GB SXM: 2,039 GB/s HBM2e; BF16/FP16 tensor 312 TFLOPS "
         "dense; no FP8"),
    _gpu("rtx-4090", 1.008, {"bf16": 165.2, "fp16": 165.2, "fp8": 330.3}, 24,
         "NVIDIA Ada Lovelace architecture whitepaper, GeForce RTX 4090: 1,008 GB/s GDDR6X (21 Gbps x 384 "
         "bit); BF16/FP16 tensor with FP32 accumulate 165.2 and FP8 with FP32 accumulate 330.3 TFLOPS dense"),
)}


def hardware_named(name) -> Hardware:
    """A preset by name (a Hardware passes through); a one-line ValueError listing the presets."""
    return preset(name, Hardware, HARDWARE, "hardware", ", cpu")


def tensor_parallel(hw: Hardware, n: int) -> Hardware:
    """``n`` of ``hw`` splitting every layer (tensor parallelism), ideally: n x bandwidth, FLOPs and memory.

    The all-reduces between the devices are not counted, so this is a lower
    bound on the time (llama-3-70b needs two 80 GB devices to hold its weights).

    >>> h = tensor_parallel(HARDWARE["h100-sxm"], 2)
    >>> h.name, h.bandwidth_bytes_per_s / 1e12, h.memory_bytes / 1e9
    ('2x h100-sxm', 6.7, 160.0)
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
        raise ValueError(f"devices must be an integer from 1 to 64, got {n!r}")
    if n == 1:
        return hw
    return Hardware(f"{n}x {hw.name}", n * hw.bandwidth_bytes_per_s, {k: n * v for k, v in hw.peak_flops.items()},
                    hw.step_overhead_s, f"{n} x ({hw.source}); ideal tensor parallelism, all-reduces not counted",
                    None if hw.memory_bytes is None else n * hw.memory_bytes, hw.overlap)


def cpu_from(bandwidth: float, flops: float, overhead: float = 0.0, dtype: str = "fp32",
             name: str = "cpu", source: str = "measured", overlap: bool = False) -> Hardware:
    """A CPU from measured figures: bandwidth (bytes/s), matmul rate (FLOP/s for ``dtype``), overhead (s/step).

    ``overlap`` is False by default: on the tiny GPT, one CPU core's pass time is
    the memory time *plus* the compute time, not the larger of the two (the
    maximum put 10 of 30 measured verify ratios within 25 %, the sum 19-24;
    ``specsim gpt serve-bench`` measures it).

    >>> hw = cpu_from(2e10, 1e11, 1e-4)
    >>> hw.peak("fp32"), hw.step_overhead_s, hw.ridge("fp32")
    (100000000000.0, 0.0001, 5.0)
    """
    return Hardware(name, float(bandwidth), {dtype: float(flops)}, float(overhead), source, overlap=overlap)


MEASURE_SECONDS = (0.1, 5.0)  # the range ``measure_cpu`` accepts


def measure_cpu(seconds: float = 1.0, overhead: float = 0.0) -> Hardware:
    """"This CPU": measured bandwidth and float32 matmul rate, about ``seconds`` of work (numpy, all threads).

    Bandwidth: copy a 64 MiB float32 array into another (64 MiB read + 64 MiB
    written per copy), the fastest copy over half the time. Matmul rate:
    2 n^3 / time of an n = 512 float32 matmul, the fastest over the other half.
    Fastest, not mean: the figure is the machine's roof, and other jobs only
    slow a copy down. numpy is imported here only.
    """
    if not MEASURE_SECONDS[0] <= seconds <= MEASURE_SECONDS[1]:
        raise ValueError(f"seconds must be from {MEASURE_SECONDS[0]} to {MEASURE_SECONDS[1]}, got {seconds}")
    import numpy as np

    src = np.ones(16 * 2**20, dtype=np.float32)  # 64 MiB
    dst = np.empty_like(src)
    n = 512
    a, b = np.ones((n, n), dtype=np.float32), np.ones((n, n), dtype=np.float32)

    def fastest(work, budget):
        best, end = float("inf"), time.perf_counter() + budget
        while True:
            t0 = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - t0)
            if time.perf_counter() >= end:
                return best

    copy_s = fastest(lambda: np.copyto(dst, src), seconds / 2)
    matmul_s = fastest(lambda: a @ b, seconds / 2)
    bandwidth, flops = 2 * src.nbytes / copy_s, 2 * n**3 / matmul_s
    return cpu_from(bandwidth, flops, overhead, source=(
        f"measured here: {bandwidth / 1e9:.1f} GB/s (64 MiB float32 copy, read + write), {flops / 1e9:.1f} "
        f"GFLOP/s (512 x 512 float32 matmul), fastest of ~{seconds:g} s; overhead {overhead * 1e6:g} µs given"))
