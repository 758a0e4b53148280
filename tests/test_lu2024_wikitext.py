"""Lu et al. (2024) Table 5, Transformer row: the word-level Transformer, its training run and its summaries.

Checks facts and contracts only (equivalence with torch's encoder layer, causality, the last block's bypass,
stacking, the Q/K/V split, the tidy format, determinism), on a tiny synthetic corpus; never a paper number.
"""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from torch import nn

from isonorm.data.corpora import fetch_corpus, load_corpus
from isonorm.experiments.lu2024 import table5_summaries
from isonorm.experiments.lu2024 import wikitext_summaries as summaries
from isonorm.experiments.lu2024.wikitext_transformer import (
    build_models,
    table5_transformer,
)
from isonorm.metrics import pii
from isonorm.models.word_transformer import (
    TABLE5_MATRICES,
    EncoderLayer,
    WordTransformerLM,
    attention_matrices,
    causal_mask,
    layer_matrices,
)
from isonorm.results import write_results
from isonorm.train import StackedModels

SYNTHETIC = {"vocab_size": 40, "n_lines": {"train": 100, "valid": 12, "test": 6}, "words_per_line": 20}
CFG = {"seeds": [42, 7], "n_layers": 2, "d_model": 16, "n_heads": 2, "d_ff": 16, "dropout": 0.1,
       "last_ffn_bypass": True, "bptt": 12, "batch_size": 20, "eval_batch_size": 10, "epochs": 2,
       "optimizer": {"name": "adam", "lr": 0.01}, "checkpoint_every": 1}


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    fetch_corpus("wikitext2", root, "synthetic", synthetic=SYNTHETIC)
    return root


@pytest.fixture(scope="module")
def run(corpus_root):
    return table5_transformer(CFG, data_root=str(corpus_root), dataset="wikitext2", device="cpu")


# --- the model -----------------------------------------------------------------------------------------------


def test_encoder_layer_computes_what_torchs_post_norm_layer_computes():
    torch.manual_seed(0)
    ours = EncoderLayer(8, 2, 12, dropout=0.0).eval()
    theirs = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, batch_first=True).eval()
    missing, unexpected = theirs.load_state_dict(ours.state_dict(), strict=True)  # same parameter names
    assert not missing and not unexpected
    x = torch.randn(3, 5, 8)
    mask = causal_mask(5)
    with torch.no_grad():
        expected = theirs(x, src_mask=mask, is_causal=True)
        assert torch.allclose(ours(x, mask), expected, atol=1e-5)


def test_last_block_ffn_bypasses_residual_and_layernorm_and_the_flag_turns_it_off():
    model = WordTransformerLM(30, d_model=8, n_heads=2, d_ff=8, n_layers=3, dropout=0.0).eval()
    names = dict(model.named_parameters())
    assert "transformer_encoder.layers.1.norm2.weight" in names
    assert "transformer_encoder.layers.2.norm2.weight" not in names
    for suffix in set(TABLE5_MATRICES.values()):
        assert f"transformer_encoder.layers.2.{suffix}" in names
    last = model.layers[2]
    x = torch.randn(2, 4, 8)
    with torch.no_grad():
        h = last.norm1(x + last.self_attn(x, causal_mask(4)))
        assert torch.allclose(last(x, causal_mask(4)), last.linear2(torch.relu(last.linear1(h))), atol=1e-6)
    plain = WordTransformerLM(30, d_model=8, n_heads=2, d_ff=8, n_layers=3, last_ffn_bypass=False)
    assert "transformer_encoder.layers.2.norm2.weight" in dict(plain.named_parameters())


def test_logits_at_a_position_depend_only_on_earlier_tokens():
    model = WordTransformerLM(30, d_model=8, n_heads=2, d_ff=8, n_layers=2, dropout=0.0).eval()
    tokens = torch.randint(0, 30, (2, 7), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 4] = (changed[:, 4] + 1) % 30
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert not torch.allclose(a[:, 4:], b[:, 4:])


def test_initialisation_is_reproducible_from_the_seed_and_stacks_like_separate_models():
    models = build_models(CFG, 25)
    again = build_models(CFG, 25)
    for name, tensor in models[0].state_dict().items():
        assert torch.equal(tensor, again[0].state_dict()[name])
    assert not torch.equal(models[0].encoder.weight, models[1].encoder.weight)
    for m in models:
        m.eval()
    stacked = StackedModels(models).eval()
    tokens = torch.randint(0, 25, (3, 6), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        out = stacked(tokens, shared_input=True)
        for r, model in enumerate(models):
            assert torch.allclose(out[r], model(tokens), atol=1e-5)


def test_query_keys_values_are_the_row_blocks_of_in_proj():
    w = torch.randn(2, 12, 4)  # (R, 3E, E), stacked
    blocks = attention_matrices(w)
    assert torch.equal(torch.cat([blocks["Query"], blocks["Keys"], blocks["Values"]], dim=-2), w)
    model = WordTransformerLM(10, d_model=4, n_heads=2, d_ff=6, n_layers=1)
    matrices = layer_matrices(dict(model.named_parameters()), 0)
    assert {k: tuple(v.shape) for k, v in matrices.items()} == {
        "Query": (4, 4), "Keys": (4, 4), "Values": (4, 4), "Atten_Output": (4, 4), "Linear_1": (6, 4),
        "Linear_2": (4, 6)}
    with pytest.raises(KeyError, match="layer 3"):
        layer_matrices(dict(model.named_parameters()), 3)


# --- the training run ----------------------------------------------------------------------------------------


def test_results_are_tidy_with_every_layer_matrix_orientation_and_seed(run):
    p = run[run.metric == "pii"]
    assert set(run.metric) == {"pii", "val_loss", "val_ppl", "train_loss"}
    assert set(p.layer) == {0, 1} and set(p.orientation) == {"columns", "rows"}
    assert set(p.matrix) == set(summaries.COLUMNS) and set(run.seed) == {42, 7}
    assert set(run.epoch) == {0, 1, 2}
    assert len(p) == 2 * 3 * 2 * 6 * 2  # seeds × epochs × layers × matrices × orientations
    assert run[run.metric == "train_loss"].epoch.min() == 1  # nothing trained at epoch 0
    assert p.value.between(0, 1).all()


def test_pii_at_epoch_0_is_that_of_the_freshly_built_models(run, corpus_root):
    models = build_models(CFG, load_corpus(corpus_root / "wikitext2").n_tokens)
    for seed, model in zip(CFG["seeds"], models):
        params = dict(model.named_parameters())
        for name, weight in layer_matrices(params, 1).items():
            row = run[(run.metric == "pii") & (run.epoch == 0) & (run.seed == seed) & (run.layer == 1)
                      & (run.matrix == name) & (run.orientation == "rows")]
            assert row.value.item() == pytest.approx(pii(weight, dim="rows").item(), rel=1e-12)


def test_fresh_model_predicts_nearly_uniformly_and_training_lowers_validation_perplexity(run):
    ppl = run[run.metric == "val_ppl"].groupby("epoch").value.mean()
    vocab = run.vocab_size.iloc[0]
    assert 0.5 * vocab < ppl[0] < 2.0 * vocab  # small logits at init: perplexity ≈ vocabulary size
    assert ppl[2] < ppl[0]
    loss = run[run.metric == "val_loss"].set_index(["seed", "epoch"]).value
    assert torch.allclose(torch.tensor(run[run.metric == "val_ppl"].set_index(["seed", "epoch"]).value.values),
                          torch.tensor(loss.values).exp())


def test_training_is_deterministic(corpus_root):
    cfg = {**CFG, "seeds": [3], "epochs": 1}
    a = table5_transformer(cfg, data_root=str(corpus_root), dataset="wikitext2", device="cpu")
    b = table5_transformer(cfg, data_root=str(corpus_root), dataset="wikitext2", device="cpu")
    pd.testing.assert_frame_equal(a, b)


def test_bad_config_is_rejected_with_the_key(corpus_root):
    with pytest.raises(ValueError, match="distinct"):
        table5_transformer({**CFG, "seeds": [1, 1]}, data_root=str(corpus_root), dataset="wikitext2", device="cpu")
    with pytest.raises(ValueError, match="optimizer"):
        table5_transformer({**CFG, "optimizer": {"name": "adam", "lr": 0.1, "nesterov": True}},
                           data_root=str(corpus_root), dataset="wikitext2", device="cpu")


# --- summaries and claims ------------------------------------------------------------------------------------


def test_table5_row_is_the_seed_mean_of_the_last_layer_columns_at_the_last_epoch(run):
    row = summaries.table5_row(run)
    assert list(row.columns) == ["model", *summaries.COLUMNS]
    assert row.model.item() == "Transformer (2 layers, wikitext2)"
    sel = run[(run.metric == "pii") & (run.layer == 1) & (run.epoch == 2) & (run.orientation == "columns")
              & (run.matrix == "Linear_2")]
    assert row.Linear_2.item() == pytest.approx(sel.value.mean())
    assert summaries.all_layers(run).shape == (2, 6)
    assert set(summaries.pii_trajectory(run).epoch) == {0, 1, 2}


def test_linear_2_margin_is_per_seed_and_signed():
    by_seed = pd.DataFrame({"Query": [0.1, 0.1], "Keys": [0.1, 0.1], "Values": [0.1, 0.1], "Atten_Output": [0.1, 0.1],
                            "Linear_1": [0.2, 0.35], "Linear_2": [0.3, 0.3]}, index=[42, 43])
    assert summaries.linear_2_margin(by_seed).tolist() == pytest.approx([0.1, -0.05])


def test_claims_from_parquet_give_the_reference_quantities(run, tmp_path):
    path = tmp_path / "transformer.parquet"
    write_results(run, path, config={"test": True})
    out = summaries.claims({summaries.RESULT_KEY: [str(path)]}, {})
    assert set(out) == {"lu2024-table5"}
    expected = {"transformer_query", "transformer_keys", "transformer_values", "transformer_atten_output",
                "transformer_linear_1", "transformer_linear_2", "transformer_linear_2_margin"}
    assert set(out["lu2024-table5"]) == expected
    cells = out["lu2024-table5"]  # two seeds: means with their seed spread; the margin is taken per seed
    assert cells["transformer_linear_2_margin"].value == pytest.approx(
        summaries.linear_2_margin(summaries.pii_by_seed(run)).mean())
    assert all(cell.spread > 0 for cell in cells.values())
    assert summaries.claims({}, {}) == {}


def test_table5_claims_gather_the_parts_and_refuse_a_quantity_twice(run, tmp_path, monkeypatch):
    """lu2024-table5's claims function: the Transformer part's quantities as that part gives them (the other parts
    did not run); two parts giving one quantity is an error, not an overwrite."""
    path = tmp_path / "transformer.parquet"
    write_results(run, path, config={"test": True})
    results = {summaries.RESULT_KEY: [str(path)]}
    assert table5_summaries.claims(results, {}) == summaries.claims(results, {})
    assert table5_summaries.claims({}, {}) == {}
    monkeypatch.setattr(table5_summaries, "PARTS", (summaries.claims, summaries.claims))
    with pytest.raises(ValueError, match="transformer_query"):
        table5_summaries.claims(results, {})
