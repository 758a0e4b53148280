"""Table 5 (d) of Lu et al. 2024: LoRA with peft, merge, PII before and after, on a tiny Qwen2 stand-in (CPU).

Checks contracts and mathematical facts only: a merge changes exactly the targeted matrices, an untouched
matrix keeps its PII, the packed-QKV split, prompt masking, the schedule, clear errors for base models that
cannot be used. No number the paper reports appears here.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest
import torch

from isonorm.checkpoints import fetch_checkpoint
from isonorm.data.instructions import fetch_instructions, load_instructions
from isonorm.experiments.lu2024 import lora, lora_summaries
from isonorm.results import write_results

QWEN2_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "gate_proj", "down_proj"]
TINY = {"num_hidden_layers": 2, "hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64,
        "vocab_size": 400, "max_position_embeddings": 256}
CFG = {  # the quick-preset shape of `lu2024: table5: lora:` (decision A13's recipe at tiny size)
    "layer": 1, "rank": 4, "alpha": 16, "dropout": 0.05,
    "targets": {"qwen": ["c_attn", "c_proj", "w1", "w2"], "qwen2": QWEN2_TARGETS},
    "lr": 2.0e-4, "epochs": 1, "max_length": 256, "batch_size": 2, "grad_accumulation": 2, "warmup_steps": 0,
    "max_grad_norm": 0.3, "weight_decay": 0.0, "max_steps": None, "gradient_checkpointing": True,
    "dtype": "bfloat16", "n_examples": 12, "orientations": ["columns", "rows"], "trust_remote_code": True,
}


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory) -> Path:
    """The checkpoint stage's tiny Qwen-style stand-in (Qwen2 classes, sharded safetensors, BPE tokenizer)."""
    return fetch_checkpoint("qwen", tmp_path_factory.mktemp("checkpoints"), source="tiny", **TINY)


@pytest.fixture(scope="module")
def alpaca(tmp_path_factory) -> Path:
    return fetch_instructions("alpaca", tmp_path_factory.mktemp("data"), source="synthetic", n_examples=12)


@pytest.fixture(scope="module")
def result(tiny_qwen, alpaca) -> pd.DataFrame:
    return lora.table5_lora(CFG, checkpoint_dir=tiny_qwen, instructions=alpaca, seed=42, device="cpu")


def tokenized(folder: Path, alpaca: Path):
    _, tokenizer, _ = lora.load_base(folder, dtype=torch.float32, device=torch.device("cpu"), trust_remote_code=True)
    return [lora.tokenize_example(tokenizer, e, 256) for e in load_instructions(alpaca)], tokenizer


# --- the merge ----------------------------------------------------------------------------------------------


def test_merge_changes_exactly_the_targeted_matrices(tiny_qwen, alpaca):
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    model, tokenizer, _ = lora.load_base(tiny_qwen, dtype=torch.float32, device=torch.device("cpu"),
                                         trust_remote_code=True)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    targets = ["q_proj", "down_proj"]
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=16, lora_dropout=0.0, target_modules=targets,
                                             bias="none", task_type="CAUSAL_LM"))
    examples = [lora.tokenize_example(tokenizer, e, 256) for e in load_instructions(alpaca)]
    losses = lora.fine_tune(model, examples, {**CFG, "lr": 1e-2}, 0, torch.device("cpu"), seed=0)
    assert len(losses) == math.ceil(math.ceil(12 / 2) / 2) and all(math.isfinite(x) for x in losses)
    after = model.merge_and_unload().state_dict()

    assert set(after) == set(before)  # merge_and_unload restores the base model's parameter names
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    expected = {k for k in before if any(k.endswith(f"{t}.weight") for t in targets)}
    assert changed == expected and len(expected) == 2 * TINY["num_hidden_layers"]


def test_a_resumed_fine_tune_continues_exactly(tiny_qwen, alpaca, tmp_path):
    from peft import LoraConfig, get_peft_model

    def fresh():
        torch.manual_seed(0)
        model, tokenizer, _ = lora.load_base(tiny_qwen, dtype=torch.float32, device=torch.device("cpu"),
                                             trust_remote_code=True)
        model = get_peft_model(model, LoraConfig(r=4, lora_alpha=16, lora_dropout=0.05, target_modules=["q_proj"],
                                                 bias="none", task_type="CAUSAL_LM"))
        return model, [lora.tokenize_example(tokenizer, e, 256) for e in load_instructions(alpaca)]

    cfg = {**CFG, "lr": 1e-2, "epochs": 2}
    model, examples = fresh()
    straight = lora.fine_tune(model, examples, cfg, 0, torch.device("cpu"), seed=0)
    model, examples = fresh()
    lora.fine_tune(model, examples, {**cfg, "epochs": 1}, 0, torch.device("cpu"), seed=0, checkpoint=tmp_path / "c")
    model, examples = fresh()  # a new process would start from the base model again
    resumed = lora.fine_tune(model, examples, cfg, 0, torch.device("cpu"), seed=0, checkpoint=tmp_path / "c")
    assert len(straight) == 6 and resumed == straight


def test_an_untouched_matrix_keeps_its_pii_exactly(tiny_qwen, alpaca):
    cfg = {**CFG, "targets": {"qwen2": ["q_proj", "v_proj"]}, "lr": 1e-2, "dtype": "float32"}
    frame = lora.table5_lora(cfg, checkpoint_dir=tiny_qwen, instructions=alpaca, seed=42, device="cpu")
    pii = frame[frame.metric == "pii"].pivot_table(index=["matrix", "orientation"], columns="stage", values="value")
    moved = frame[frame.metric == "max_abs_change"].set_index("matrix").value
    for matrix in ("Keys", "Atten_Output", "Linear_1", "Linear_2"):
        assert (pii.loc[matrix, "after"] == pii.loc[matrix, "before"]).all()
        assert moved[matrix] == 0.0
    for matrix in ("Query", "Values"):
        assert moved[matrix] > 0 and (pii.loc[matrix, "after"] != pii.loc[matrix, "before"]).all()


# --- the whole job ------------------------------------------------------------------------------------------


def test_the_tiny_qwen_path_runs_end_to_end(result):
    pii = result[result.metric == "pii"]
    assert set(pii.stage) == {"before", "after"} and set(pii.matrix) == set(lora.TABLE_COLUMNS)
    assert set(pii.orientation) == {"columns", "rows"} and pii.value.between(0, 1).all()
    assert (pii.parameter.str.startswith("model.layers.1.")).all()
    losses = result[result.metric == "loss"].sort_values("step")
    assert list(losses.step) == [1, 2, 3] and losses.value.map(math.isfinite).all()  # ceil(6 micro-batches / 2)
    assert (result.optimizer_steps == 3).all() and (result.model_type == "qwen2").all()
    assert (result.n_dropped == 0).all()
    assert result.checkpoint.iloc[0].startswith("tiny random Qwen2ForCausalLM")
    assert result.instructions_source.iloc[0] == "synthetic"
    changed = result[result.metric == "changed_fraction"].value
    assert len(changed) == 6 and changed.between(0, 1).all()


def test_the_run_is_deterministic(result, tiny_qwen, alpaca):
    again = lora.table5_lora(CFG, checkpoint_dir=tiny_qwen, instructions=alpaca, seed=42, device="cpu")
    pd.testing.assert_frame_equal(result, again)


def test_summaries_and_claims_read_the_written_file(result, tmp_path):
    path = write_results(result, tmp_path / "seed42.parquet", config=CFG)
    table = lora_summaries.pii_table(result)
    assert list(table.columns) == list(lora.TABLE_COLUMNS) and table.notna().all().all()
    changes = lora_summaries.pii_changes(result)
    assert (changes["PII_col change"] - (changes["PII_col after"] - changes["PII_col before"])).abs().max() < 1e-15
    measured = lora_summaries.claims({lora_summaries.RESULT_KEY: [str(path)]}, {})["lu2024-table5"]
    assert measured["lora_max_abs_pii_change"].value == pytest.approx(changes["PII_col change"].abs().max())
    assert measured["lora_query"].value == pytest.approx(table.loc[lora_summaries.ROW_LABELS["after"], "Query"])
    assert math.isnan(measured["lora_query"].spread)  # one seed: no seed spread
    assert len(measured) == 3 * 6 + 2
    assert lora_summaries.claims({}, {}) == {}


# --- pieces -------------------------------------------------------------------------------------------------


def test_prompt_tokens_are_masked_and_the_response_ends_with_eos(tiny_qwen, alpaca):
    examples, tokenizer = tokenized(tiny_qwen, alpaca)
    example = load_instructions(alpaca)[0]
    ids, labels = examples[0]
    n_prompt = len(tokenizer(lora.alpaca_prompt(example), add_special_tokens=False)["input_ids"])
    assert labels[:n_prompt] == [lora.IGNORE_INDEX] * n_prompt
    assert labels[n_prompt:] == ids[n_prompt:] and ids[-1] == lora.eos_id(tokenizer)
    short_ids, short_labels = lora.tokenize_example(tokenizer, example, 5)
    assert len(short_ids) == len(short_labels) == 5
    batch = lora.collate([examples[0], (ids[:3], labels[:3])], pad_id=7)
    assert batch["input_ids"].shape == (2, len(ids)) and batch["attention_mask"][1].sum() == 3
    assert (batch["labels"][1, 3:] == lora.IGNORE_INDEX).all() and (batch["input_ids"][1, 3:] == 7).all()


def test_examples_whose_response_is_cut_away_are_dropped():
    kept = lora.trainable([([1, 2, 3], [-100, -100, 3]), ([1, 2], [-100, -100])], max_length=3)
    assert kept == [([1, 2, 3], [-100, -100, 3])]
    with pytest.raises(ValueError, match="raise `lu2024: table5: lora: max_length`"):
        lora.trainable([([1, 2], [-100, -100])], max_length=2)


def test_alpaca_templates_with_and_without_input():
    with_input = lora.alpaca_prompt({"instruction": "Sort.", "input": "b, a", "output": "a, b"})
    without = lora.alpaca_prompt({"instruction": "Add 1 and 2.", "input": "", "output": "3"})
    assert "### Input:\nb, a\n\n### Response:" in with_input and with_input.endswith("### Response:")
    assert "### Input" not in without and without.endswith("### Instruction:\nAdd 1 and 2.\n\n### Response:")


def test_constant_with_warmup_schedule():
    assert [lora.constant_with_warmup(s, 4) for s in range(6)] == [0.0, 0.25, 0.5, 0.75, 1.0, 1.0]
    assert lora.constant_with_warmup(0, 0) == 1.0


def test_packed_qkv_is_split_into_equal_row_blocks():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = torch.nn.Linear(4, 12), torch.nn.Linear(4, 4)
            self.w1, self.w2 = torch.nn.Linear(4, 6), torch.nn.Linear(4, 6)

    model = torch.nn.Module()
    model.transformer = torch.nn.Module()
    block = Block()
    model.transformer.h = torch.nn.ModuleList([block])
    attn, mlp = torch.nn.Module(), torch.nn.Module()
    attn.c_attn, attn.c_proj, mlp.w1, mlp.w2 = block.c_attn, block.c_proj, block.w1, block.w2
    model.transformer.h = torch.nn.ModuleList([torch.nn.Module()])
    model.transformer.h[0].attn, model.transformer.h[0].mlp = attn, mlp
    matrices = lora.layer_matrices(model, "qwen", 0)
    packed = attn.c_attn.weight.detach().double()
    for i, column in enumerate(("Query", "Keys", "Values")):
        name, weight = matrices[column]
        assert name == "transformer.h.0.attn.c_attn.weight" and torch.equal(weight, packed[4 * i:4 * (i + 1)])
    assert matrices["Linear_2"][1].shape == (6, 4)


# --- clear errors -------------------------------------------------------------------------------------------


def test_a_missing_layer_names_the_config_key(tiny_qwen, alpaca):
    with pytest.raises(lora.LoraBaseModelError, match="lu2024: table5: lora: layer"):
        lora.table5_lora({**CFG, "layer": 8}, checkpoint_dir=tiny_qwen, instructions=alpaca, seed=42, device="cpu")


def qwen_v1_folder(tmp_path: Path, monkeypatch) -> Path:
    """A folder that says it is Qwen v1 (model_type qwen); the checkpoint-stage checks are skipped."""
    folder = tmp_path / "qwen-v1"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen", "auto_map": {
        "AutoModelForCausalLM": "modeling_qwen.QWenLMHeadModel"}}))
    monkeypatch.setattr(lora, "_check_checkpoint", lambda folder: None)
    return folder


def test_qwen_v1_without_its_packages_fails_naming_the_config_key(tmp_path, monkeypatch):
    folder = qwen_v1_folder(tmp_path, monkeypatch)
    monkeypatch.setattr(lora.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(lora.LoraBaseModelError) as caught:
        lora.load_base(folder, dtype=torch.bfloat16, device=torch.device("cpu"), trust_remote_code=True)
    message = str(caught.value)
    assert "lu2024: table5: lora: checkpoint" in message and "tiktoken" in message and "transformers" in message


def test_qwen_v1_remote_code_that_fails_to_load_names_the_config_key(tmp_path, monkeypatch):
    folder = qwen_v1_folder(tmp_path, monkeypatch)
    monkeypatch.setattr(lora.importlib.util, "find_spec", lambda name: object())  # packages "installed"
    with pytest.raises(lora.LoraBaseModelError, match="lu2024: table5: lora: checkpoint"):
        lora.load_base(folder, dtype=torch.bfloat16, device=torch.device("cpu"), trust_remote_code=True)


def test_an_unknown_architecture_or_a_partial_fetch_is_refused(tmp_path, monkeypatch, tiny_qwen):
    folder = tmp_path / "bert"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    monkeypatch.setattr(lora, "_check_checkpoint", lambda folder: None)
    with pytest.raises(lora.LoraBaseModelError, match="knows the causal LMs"):
        lora.load_base(folder, dtype=torch.float32, device=torch.device("cpu"), trust_remote_code=True)
    monkeypatch.undo()
    from isonorm import checkpoints

    record = checkpoints.checkpoint_record(tiny_qwen)
    monkeypatch.setattr(checkpoints, "checkpoint_record", lambda folder: {**record, "tensors": ["*layers.1.*"]})
    with pytest.raises(lora.LoraBaseModelError, match="builds the whole model"):
        lora.load_base(tiny_qwen, dtype=torch.float32, device=torch.device("cpu"), trust_remote_code=True)


def test_a_bad_dtype_is_rejected(tiny_qwen, alpaca):
    with pytest.raises(ValueError, match="dtype must be one of"):
        lora.table5_lora({**CFG, "dtype": "int8"}, checkpoint_dir=tiny_qwen, instructions=alpaca, seed=42)


def test_the_dtype_can_be_chosen_per_device_type():
    per_device = {"cuda": "bfloat16", "cpu": "float32"}  # the shapes preset's setting
    assert lora._dtype(per_device, torch.device("cpu")) is torch.float32
    assert lora._dtype(per_device, torch.device("cuda")) is torch.bfloat16
    assert lora._dtype("bfloat16", torch.device("cpu")) is torch.bfloat16
    with pytest.raises(ValueError, match="dtype for device type 'cpu' must be one of"):
        lora._dtype({"cuda": "bfloat16"}, torch.device("cpu"))


@pytest.mark.parametrize("checkpointing", [True, False])
def test_with_lora_turns_activation_checkpointing_on_as_configured(tiny_qwen, checkpointing):
    """``gradient_checkpointing`` of the config reaches the base model through transformers 5's own name for it
    (``activation_checkpointing_enable``; the old name is a deprecated alias, gone in transformers 6)."""
    model, _, model_type = lora.load_base(tiny_qwen, dtype=torch.float32, device=torch.device("cpu"),
                                          trust_remote_code=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="`gradient_checkpointing_enable` is deprecated")
        wrapped = lora.with_lora(model, {**CFG, "gradient_checkpointing": checkpointing}, model_type)
    assert wrapped.base_model.model.is_activation_checkpointing is checkpointing
