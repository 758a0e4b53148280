"""Fig. B.5 probe on a tiny random GPT-2 (joudaki2023-figb5 "Smoke test"): module order, Add entries, filters, modes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from isonorm.checkpoints import fetch_checkpoint, load_checkpoint_model, load_checkpoint_tokenizer
from isonorm.data import fetch_texts, load_texts
from isonorm.experiments.joudaki2023 import gpt2_summaries as s
from isonorm.experiments.joudaki2023.gpt2_probe import figb5

# joudaki2023-figb5: the entries of one block, in hook firing order (children finish before their parent).
BLOCK_ORDER = ["Add_1", "ln_1", "attn.c_attn", "attn.c_proj", "attn.resid_dropout", "attn", "Add_2", "ln_2",
               "mlp.c_fc", "mlp.act", "mlp.c_proj", "mlp.dropout", "mlp"]
CFG = {"n_texts": 2, "max_chars": 100, "min_block": -1, "modes": ["train", "eval"], "seed": 0}


@pytest.fixture(scope="module")
def resources(tmp_path_factory):
    root = tmp_path_factory.mktemp("probe")
    checkpoint = fetch_checkpoint("gpt2", root / "checkpoints", source="tiny")  # n_layer=2, n_embd=64
    texts = fetch_texts("simplewiki", root / "data", source="shipped", n_texts=3, max_chars=100)
    return checkpoint, texts


@pytest.fixture(scope="module")
def frame(resources):
    checkpoint, texts = resources
    return figb5(CFG, checkpoint_dir=checkpoint, texts=texts, device="cpu")


def numpy_gap(h: torch.Tensor) -> float:
    """Isometry gap of the token Gram, computed independently with NumPy: log mean λ − mean log λ."""
    x = h.reshape(-1, h.shape[-1]).double().numpy()
    eig = np.linalg.eigvalsh(x @ x.T)
    return float(np.log(eig.mean()) - np.log(eig).mean())


def test_module_order_per_block_is_the_papers(frame):
    one = frame[(frame["mode"] == "train") & (frame.text == 0)].sort_values("li")
    expected = [name for b in (0, 1) for name in [f"h.{b}.{m}" for m in BLOCK_ORDER] + [f"h.{b}"]]
    assert list(one.module) == expected
    assert list(one.li) == list(range(len(expected)))
    assert not frame.module.str.contains("attn_dropout|ln_f|wte|wpe").any()


def test_add_entry_is_the_gap_of_the_layernorm_input(resources, frame):
    checkpoint, texts = resources
    model = load_checkpoint_model(checkpoint).eval()
    tokenizer = load_checkpoint_tokenizer(checkpoint)
    seen = {}
    for name in ("h.0.ln_1", "h.0.ln_2", "h.1.ln_1"):
        model.get_submodule(name).register_forward_hook(
            lambda m, args, out, name=name: seen.update({name: (args[0].detach(), out.detach())}))
    text = load_texts(texts, 1, CFG["max_chars"])[0]
    with torch.no_grad():
        model(**tokenizer(text, return_tensors="pt"))
    ev = frame[(frame["mode"] == "eval") & (frame.text == 0)].set_index("module").iso_gap
    for name, (ln_in, ln_out) in seen.items():
        add = name.replace("ln", "Add")
        assert ev[add] == pytest.approx(numpy_gap(ln_in), rel=1e-9)
        assert ev[name] == pytest.approx(numpy_gap(ln_out), rel=1e-9)
    assert ev["h.1.Add_1"] == ev["h.0"]  # the residual stream: block 0's output is block 1's LN input


def test_gaps_are_finite_and_nonnegative(frame):
    assert np.isfinite(frame.iso_gap).all() and (frame.iso_gap >= 0).all()  # AM-GM: log mean ≥ mean log
    assert (frame.tokens < 64).all()  # fewer tokens than features: a non-singular token Gram


def test_min_block_keeps_only_later_blocks(resources):
    checkpoint, texts = resources
    later = figb5({**CFG, "min_block": 0, "modes": ["eval"], "n_texts": 1}, checkpoint_dir=checkpoint, texts=texts,
                  device="cpu")
    assert set(later.block) == {1} and list(later.li) == list(range(len(BLOCK_ORDER) + 1))
    with pytest.raises(ValueError, match="keeps no block"):
        figb5({**CFG, "min_block": 1}, checkpoint_dir=checkpoint, texts=texts, device="cpu")


def test_train_mode_is_seeded_and_dropout_is_on(resources, frame):
    checkpoint, texts = resources
    state = torch.get_rng_state()
    again = figb5(CFG, checkpoint_dir=checkpoint, texts=texts, device="cpu")
    assert torch.equal(torch.get_rng_state(), state)  # the probe does not move the caller's RNG
    assert again.iso_gap.tolist() == frame.iso_gap.tolist()
    other = figb5({**CFG, "seed": 1, "modes": ["train"]}, checkpoint_dir=checkpoint, texts=texts, device="cpu")
    train = frame[frame["mode"] == "train"].reset_index(drop=True)
    assert not np.allclose(other.iso_gap, train.iso_gap)
    gaps = train[train.text == 0].set_index("module").iso_gap  # dropout changes its output in train mode
    assert gaps["h.0.attn.resid_dropout"] != gaps["h.0.attn.c_proj"]


def test_eval_mode_has_no_dropout_and_ignores_the_seed(resources, frame):
    checkpoint, texts = resources
    ev = frame[frame["mode"] == "eval"]
    gaps = ev[ev.text == 0].set_index("module").iso_gap
    assert gaps["h.0.attn.resid_dropout"] == gaps["h.0.attn.c_proj"]
    assert gaps["h.0.mlp.dropout"] == gaps["h.0.mlp.c_proj"] == gaps["h.0.mlp"]
    other = figb5({**CFG, "seed": 7, "modes": ["eval"]}, checkpoint_dir=checkpoint, texts=texts, device="cpu")
    assert other.iso_gap.tolist() == ev.iso_gap.tolist()


def test_bad_modes_are_rejected(resources):
    checkpoint, texts = resources
    with pytest.raises(ValueError, match="modes"):
        figb5({**CFG, "modes": ["inference"]}, checkpoint_dir=checkpoint, texts=texts, device="cpu")


def test_summaries_and_claims(frame, tmp_path):
    pairs = s.add_ln_pairs(frame)
    assert len(pairs) == 2 * 2 * CFG["n_texts"]  # blocks × (ln_1, ln_2) × texts
    assert np.allclose(pairs["drop"], pairs["add"] - pairs["ln"])
    path = tmp_path / "gpt2.parquet"
    frame.to_parquet(path)
    assert s.claims({}, {}) == {}
    out = s.claims({"figb5": [str(path)]}, {})["joudaki2023-figb5"]
    assert out["block_output_equals_next_add"].value == 1.0
    means = s.entry_means(frame)
    assert out["max_gap"].value == pytest.approx(means.iso_gap.max())
    assert not out["max_gap"].spread < 0  # over the texts (NaN with one)
    assert out["argmax_is_last_attn_c_proj"].value in (0.0, 1.0)
    pairs = s.pair_means(frame)
    assert out["max_ln_over_add"].value == pytest.approx((pairs["ln"] - pairs["add"]).max())
    assert "max_ln_over_add_eval" in out
    assert not any(k.startswith(("add_h", "ln_h")) for k in out)  # the paper's blocks 7-11 are absent here
    assert all(math.isfinite(v.value) for v in out.values())
