"""What a benchmark ran on, so that figures from two machines are not read as one.

On a CPU the tiny GPT's speedup in bfloat16 turns on how the processor multiplies bfloat16 matrices:
in AMX tiles (recent Intel Xeons), in AVX-512 BF16 vector instructions (AMD Zen 4, some Xeons), or by
converting to float32 first. That sets what a verify pass over gamma + 1 positions costs against one
plain step (v), so the same code, weights and seed give a different best gamma and speedup on each.
``gpt bench`` and ``gpt bench --profile`` therefore record the machine beside their figures.

>>> cpu_facts("model name\\t: Some CPU\\nflags\\t\\t: fpu avx512f avx512_bf16 amx_tile amx_bf16\\n")
{'name': 'Some CPU', 'bfloat16_matrix': 'AMX tiles'}
>>> cpu_facts("model name : Other\\nflags : fpu avx2\\n")["bfloat16_matrix"]
'none (converted to float32)'
>>> cpu_facts("")  # no /proc/cpuinfo (not Linux): nothing to say
{'name': None, 'bfloat16_matrix': None}
"""
from __future__ import annotations

import platform

import torch


def cpu_facts(cpuinfo: str) -> dict:
    """The processor's name and its bfloat16 matrix hardware, from the text of /proc/cpuinfo."""
    fields = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:  # the first processor's lines stand for all
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    if not flags:
        kind = None
    elif "amx_bf16" in flags:
        kind = "AMX tiles"
    elif "avx512_bf16" in flags:
        kind = "AVX-512 BF16"
    else:
        kind = "none (converted to float32)"
    return {"name": fields.get("model name"), "bfloat16_matrix": kind}


def read_cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)  # the first processors' entries are enough
    except OSError:
        return ""


def machine(device) -> dict:
    """The processor (or GPU), torch's CPU kernels and version, and the thread count a run used."""
    facts = cpu_facts(read_cpuinfo())
    out = {"cpu": facts["name"] or platform.processor() or platform.machine() or None,
           "bfloat16_matrix": facts["bfloat16_matrix"],
           "torch_cpu_kernels": torch.backends.cpu.get_cpu_capability(),
           "torch": torch.__version__.split("+")[0], "threads": torch.get_num_threads()}
    if torch.device(device).type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return out


def describe(m: dict) -> str:
    """One line for a report's header.

    >>> describe({"cpu": "X", "bfloat16_matrix": "AMX tiles", "torch_cpu_kernels": "AVX512", "torch": "2.13.0",
    ...           "threads": 1})
    'X (bfloat16 matrices: AMX tiles; torch 2.13.0 with AVX512 kernels, 1 thread)'
    """
    parts = [f"bfloat16 matrices: {m['bfloat16_matrix']}"] if m.get("bfloat16_matrix") else []
    parts.append(f"torch {m['torch']} with {m['torch_cpu_kernels']} kernels, {m['threads']} thread"
                 + ("s" if m["threads"] != 1 else ""))
    head = m.get("gpu") or m.get("cpu") or "unknown processor"
    return f"{head} ({'; '.join(parts)})"
