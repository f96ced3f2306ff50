"""Citations a student can look up: no private source files, and every arXiv id is one that was checked.

The lessons, README, pages and pitfalls were once drawn from unpublished
source documents ("Source 001" ... "Source 004"). Claims taken from them are
now quoted as common claims, and facts are credited to published papers.
Each arXiv id cited anywhere must be in ``CHECKED`` below, which names the
paper it was verified against, so a mistyped id fails here.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLACES = [ROOT / "README.md", *sorted((ROOT / "lessons").glob("*.md")),
          *sorted(p for p in (ROOT / "specsim").rglob("*") if p.suffix in (".py", ".md", ".json")
                  and "data" not in p.parts and "weights" not in p.parts),
          *sorted((ROOT / "app").rglob("*.py"))]

CHECKED = {  # arXiv id -> the paper it was checked against
    "1503.02531": "Hinton, Vinyals & Dean: Distilling the Knowledge in a Neural Network",
    "2211.17192": "Leviathan, Kalman & Matias: Fast Inference from Transformers via Speculative Decoding",
    "2302.01318": "Chen et al.: Accelerating Large Language Model Decoding with Speculative Sampling",
    "2305.09781": "Miao et al.: SpecInfer",
    "2309.06180": "Kwon et al.: Efficient Memory Management for LLM Serving with PagedAttention (vLLM)",
    "2310.08461": "Zhou et al.: DistillSpec",
    "2310.15141": "Sun et al.: SpecTr",
    "2401.10774": "Cai et al.: Medusa",
    "2401.15077": "Li et al.: EAGLE",
    "2402.12374": "Chen et al.: Sequoia",
    "2406.14066": "Liu et al.: goodput-driven speculative decoding (SmartSpec / TurboSpec)",
    "2406.16858": "Li et al.: EAGLE-2",
    "2408.11049": "MagicDec",
    "2309.17453": "Xiao et al.: Efficient Streaming Language Models with Attention Sinks (StreamingLLM)",
    "2412.19437": "DeepSeek-AI: DeepSeek-V3 Technical Report",
    "2502.05202": "Timor et al.: Lossless Speculative Decoding Algorithms for Heterogeneous Vocabularies",
    "2503.01840": "Li et al.: EAGLE-3",
    "1701.06538": "Shazeer et al.: Outrageously Large Neural Networks (the sparsely-gated mixture-of-experts layer)",
    "1811.03115": "Stern, Shazeer & Uszkoreit: Blockwise Parallel Decoding for Deep Autoregressive Models",
    "2101.03961": "Fedus, Zoph & Shazeer: Switch Transformers",
    "2401.04088": "Jiang et al.: Mixtral of Experts",
    "2404.19737": "Gloeckle et al.: Better & Faster Large Language Models via Multi-token Prediction",
    "2407.21783": "Llama Team, AI @ Meta: The Llama 3 Herd of Models",
    "2411.01076": "Wei et al.: Privacy Risks of Speculative Decoding in Large Language Models",
    "2501.19309": "Bachmann et al.: Judge Decoding: Faster Speculative Sampling Requires Going Beyond Model Alignment",
    "2502.14856": "Zhao et al.: FR-Spec: Frequency-Ranked Speculative Sampling for large-vocabulary models",
    "2504.18583": "An et al.: PARD: Accelerating LLM Inference with Low-Cost PARallel Draft Model Adaptation",
    "2602.06036": "Chen, Liang & Liu: DFlash: Block Diffusion for Flash Speculative Decoding",
    "2604.07622": "DIVERSED: Relaxed Speculative Decoding via Dynamic Ensemble Verification (submitted 8 Apr 2026)",
}
ARXIV = re.compile(r"arXiv[: ]?(\d{4}\.\d{4,5})", flags=re.I)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_places_are_found():
    names = {p.name for p in PLACES}
    assert {"README.md", "01-why-decoding-is-slow.md", "pitfalls.json", "trees.py"} <= names


@pytest.mark.parametrize("path", PLACES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_source_is_cited(path):
    low = _text(path).lower()
    for phrase in ("source 00", "sources 00", "source documents", "seed 003"):
        assert phrase not in low, f"{path.name} cites {phrase!r}, which a student cannot look up"


def test_every_arxiv_id_cited_was_checked():
    cited = {m for p in PLACES for m in ARXIV.findall(_text(p))}
    assert cited, "no arXiv id found at all"
    unchecked = sorted(cited - set(CHECKED))
    assert not unchecked, f"arXiv ids not in the checked list: {unchecked}"


def test_the_papers_that_carry_the_key_facts_are_cited_with_their_ids():
    everything = " ".join(_text(p) for p in PLACES)
    for arxiv_id in ("2211.17192", "2302.01318", "2401.10774", "2401.15077", "2305.09781"):
        assert f"arXiv:{arxiv_id}" in everything, CHECKED[arxiv_id]
