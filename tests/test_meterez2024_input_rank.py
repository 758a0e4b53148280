"""Table D1 of Meterez et al. 2024: Gram ranks and cosines of input batches (synthetic data, seconds)."""

from __future__ import annotations

import pytest
import torch

from isonorm.data import fetch_dataset
from isonorm.experiments.meterez2024 import at_init_summaries as s
from isonorm.experiments.meterez2024 import input_rank as r
from isonorm.results import read_all_results, write_results

QUICK = {"batch_sizes": [16, 32], "batches": 5, "transform": "to_tensor", "split": "train", "seed": 0}


def test_gram_rank_counts_independent_samples():
    gen = torch.Generator().manual_seed(0)
    basis = torch.rand(5, 40, generator=gen)
    x = torch.rand(12, 5, generator=gen) @ basis  # 12 samples in a 5-dimensional span
    assert int(r.gram_rank(x)) == 5
    assert int(r.gram_rank(torch.rand(12, 40, generator=gen))) == 12
    assert r.gram_rank(torch.rand(3, 12, 40, generator=gen)).tolist() == [12, 12, 12]  # batched


def test_gram_rank_uses_the_float32_default_tolerance():
    """Singular values below σ_max·n·eps(float32) do not count, even when the float64 rank is full."""
    q, _ = torch.linalg.qr(torch.randn(8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    x = q * torch.tensor([1.0] * 7 + [1e-5], dtype=torch.float64)  # Gram eigenvalue 1e-10 ≪ 8·1.2e-7
    assert int(r.gram_rank(x)) == 7
    assert int(torch.linalg.matrix_rank(x @ x.mT)) == 8


def test_mean_cosine_is_the_signed_off_diagonal_mean():
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(6, 9, generator=gen)
    unit = x / x.norm(dim=1, keepdim=True)
    cos = unit @ unit.T
    brute = sum(float(cos[i, j]) for i in range(6) for j in range(6) if i != j) / 30
    assert float(r.mean_offdiagonal_cosine(x)) == pytest.approx(brute)
    assert float(r.mean_offdiagonal_cosine(torch.eye(4))) == pytest.approx(0.0)
    assert float(r.mean_offdiagonal_cosine(torch.ones(4, 3))) == pytest.approx(1.0)
    assert float(r.mean_offdiagonal_cosine(torch.cat([torch.ones(1, 3), -torch.ones(1, 3)]))) == pytest.approx(-1.0)


def test_rank_table_is_seeded_and_checks_sizes():
    x = torch.rand(100, 20, generator=torch.Generator().manual_seed(3))
    frame = r.rank_table(x, [8, 40], 4, seed=0)
    assert len(frame) == 2 * 4 * 2 and set(frame["metric"]) == {"rank", "mean_cosine"}
    ranks = frame[frame.metric == "rank"]
    assert (ranks[ranks.n == 8]["value"] == 8).all() and (ranks[ranks.n == 40]["value"] == 20).all()  # ≤ features
    assert frame.equals(r.rank_table(x, [8, 40], 4, seed=0))
    with pytest.raises(ValueError, match="batch size"):
        r.rank_table(x, [101], 1, seed=0)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict[str, list[str]]:
    root = tmp_path_factory.mktemp("data")
    out = tmp_path_factory.mktemp("results")
    paths = []
    for name in ("cifar10", "mnist"):
        fetch_dataset(name, root, "synthetic", n_train=80, n_test=10, seed=1)
        frame = r.tabled1(QUICK, data_root=str(root), dataset=name, device="cpu")
        write_results(frame, out / f"{name}.parquet", config=QUICK)
        paths.append(str(out / f"{name}.parquet"))
    return {"tabled1": paths}


def test_tabled1_records_provenance_and_summarises(table):
    frame = read_all_results(table["tabled1"])
    assert set(frame["torch_version"]) == {torch.__version__} and set(frame["transform"]) == {"to_tensor"}
    assert set(frame["dataset"]) == {"cifar10", "mnist"}
    summary = s.rank_summary(frame)
    assert len(summary) == 4 and (summary["rank_mean"] <= summary["n"]).all()
    assert ((summary["mean_cosine_mean"] > 0) & (summary["mean_cosine_mean"] <= 1)).all()  # [0, 1] pixels
    text = s.rank_table_text(frame)
    assert list(text.index) == ["cifar10", "mnist"] and list(text.columns) == ["n=16", "n=32"]
    cosines = s.largest_n_cosines(frame)  # the table note's cosines, at the largest n
    largest = summary[summary["n"] == 32].set_index("dataset")["mean_cosine_mean"]
    assert cosines.name == 32 and cosines.to_dict() == largest.to_dict()


def test_tabled1_claims(table):
    claims = s.claims(table, {})["meterez2024-tabled1"]
    assert {"cifar10_n16_rank_mean", "mnist_n32_rank_std", "cifar10_mean_cosine_n32", "mnist_full_rank_small_n"} <= set(claims)
    assert claims["cifar10_full_rank_small_n"] in (0.0, 1.0)



def test_a_rank_std_counts_its_batches_so_a_printed_std_brings_its_own_noise():
    """A std over 100 batches has the sampling noise of 100 batches; the printed one (``paper_runs: 100``) as much.
    Without its batch count the scoreboard could not scale its spread to the paper's count, and a std that differs
    by less than either's noise was a mismatch (Fashion-MNIST n = 512 on real data: 5.06 against 4.20)."""
    from isonorm.verdicts.scoreboard import reported_noise

    values = torch.Generator().manual_seed(0)
    ranks = (torch.randn(100, generator=values) * 4 + 275).round().numpy()
    std = s._std_with_spread(ranks)
    assert std.runs == 100 and std.spread > 0
    assert reported_noise(std.spread, std.runs, 100) == pytest.approx(std.spread)
