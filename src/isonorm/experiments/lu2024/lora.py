"""Table 5 (d): PII of Qwen-7B's layer-8 matrices before LoRA fine-tuning and after merging the adapter.

Lu et al.'s ``qwen_lora.py`` loads the base model, merges a LoRA adapter (``merge_and_unload``: W' = W +
(α/r)·B·A) and computes PII_col of the layer-8 matrices; the adapter and its training recipe are not
published (lu2024-table5 (d)). Decision A13 fixes the run: plain LoRA with ``peft`` on a bf16 base (no
4-bit QLoRA), r = 64, α = 16, dropout 0.05, targets c_attn/c_proj/w1/w2 (Firefly's Qwen-7B recipe, which the
authors' merge script copies), lr 2e-4, 1 epoch, max length 512, seed 42, the first 5,000 Alpaca examples.

Steps of :func:`table5_lora` (one seed per call):

1. load the base model (``AutoModelForCausalLM``; Qwen v1 needs its remote code) and tokenizer;
2. copy the measured matrices of block ``layer`` (``checkpoint_pii.matrix_specs``, by ``model_type``) in float64;
3. wrap with a peft ``LoraConfig`` on the targets of that ``model_type`` (config ``targets``);
4. train one epoch on Alpaca prompts (:data:`ALPACA_PROMPTS`), labels masked on the prompt (-100), AdamW with
   constant-with-warmup lr and gradient clipping (Firefly's recipe), on the training engine (:class:`LoraStep`);
5. ``merge_and_unload()`` and measure the same matrices again.

Rows (tidy, ``metric``/``value``): ``stage`` before/after × ``matrix`` × ``orientation`` (``pii``; both
orientations are stored, decision A1; the table uses columns), ``stage`` delta (``relative_change`` =
‖W'−W‖_F/‖W‖_F, ``max_abs_change``, ``changed_fraction`` of entries: in bf16 a small update can round away),
and ``stage`` train (``loss`` per optimizer step).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ...cost import sampled, scale_depth
from ...data.instructions import describe_instructions, load_instructions
from ...metrics.pii import pii_chunked
from ...runtime import derive_seed, resolve_device
from ...train import OptimizerConfig, TrainConfig, build_optimizer, train_epochs
from .checkpoint_pii import cut_matrix, matrix_specs

log = logging.getLogger(__name__)

CONFIG_KEY = "lu2024: table5: lora: checkpoint"  # named in every "use another base model" message
IGNORE_INDEX = -100  # labels ignored by the causal-LM loss (transformers; stanford_alpaca train.py)
TABLE_COLUMNS = ("Query", "Keys", "Values", "Atten_Output", "Linear_1", "Linear_2")  # paper Table 5
QWEN_V1_PACKAGES = ("tiktoken", "einops", "transformers_stream_generator")  # Qwen-7B's remote code imports

# Stanford Alpaca's prompt templates (github.com/tatsu-lab/stanford_alpaca, train.py PROMPT_DICT); the response
# (the example's `output`) follows the prompt directly and ends with the tokenizer's end-of-sequence token, and
# the loss is computed on the response only (the prompt's labels are IGNORE_INDEX), as in that train.py.
ALPACA_PROMPTS = {
    "prompt_input": (
        "Below is an instruction that describes a task, paired with an input that provides further context. "
        "Write a response that appropriately completes the request.\n\n"
        "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:"
    ),
    "prompt_no_input": (
        "Below is an instruction that describes a task. "
        "Write a response that appropriately completes the request.\n\n"
        "### Instruction:\n{instruction}\n\n### Response:"
    ),
}


# The base models LoRA is run on: causal LMs whose Table-5 matrices checkpoint_pii names (lu2024-table5 (c)/lu2024-table5 (d):
# Qwen v1 splits c_attn into Q, K, V, Linear_1/Linear_2 = w1/w2; Qwen2, the tiny stand-in's classes, and LLaMA
# use up_proj/gate_proj, decision A12). The same name maps serve Table 5 (c) and (d).
CAUSAL_LM_TYPES = ("qwen", "qwen2", "llama")


class LoraBaseModelError(RuntimeError):
    """The base model cannot be loaded or is not one whose Table-5 matrices are known."""


# --- loading -------------------------------------------------------------------------------------------------


def read_model_type(checkpoint_dir: Path) -> str:
    """``model_type`` of the checkpoint's config.json (e.g. ``qwen`` for Qwen-7B v1, ``qwen2``)."""
    path = Path(checkpoint_dir) / "config.json"
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["model_type"])
    except (OSError, ValueError, KeyError) as err:
        raise LoraBaseModelError(
            f"{path} is missing or has no `model_type` ({err}); fetch the checkpoint named by `{CONFIG_KEY}` again"
        ) from err


def _check_checkpoint(checkpoint_dir: Path) -> None:
    """The checkpoint stage's own checks (marker, file sizes, safetensors headers) before transformers reads it.

    Training needs every weight: a checkpoint fetched for some tensors only (the Table 5 (c) PII rows fetch just
    the shards holding layer 8, ``tensors:`` in its config) cannot be built into a model.
    """
    from ...checkpoints import checkpoint_record

    record = checkpoint_record(checkpoint_dir)
    if record.get("tensors") is not None:
        raise LoraBaseModelError(
            f"{checkpoint_dir} holds only the shards with tensors {record['tensors']}, but LoRA training builds the "
            f"whole model; give the checkpoint named by `{CONFIG_KEY}` no `tensors:` (every shard) or point that "
            "key at a checkpoint entry fetched whole"
        )


def _remote_code_help(model_type: str, err: BaseException | None) -> str:
    import transformers

    cause = f" ({type(err).__name__}: {err})" if err is not None else ""
    return (
        f"the base model's remote code (model_type {model_type!r}, Qwen-7B v1) could not be loaded with the "
        f"pinned transformers {transformers.__version__}{cause}. Qwen v1's remote code targets transformers "
        f"~4.32 and needs the packages {', '.join(QWEN_V1_PACKAGES)}. Point `{CONFIG_KEY}` at another base model "
        "whose classes ship with transformers (e.g. a Qwen2 checkpoint under `checkpoints: models:`), or run "
        "this rule in an environment pinned to a transformers release from Qwen-7B's time."
    )


def load_base(
    checkpoint_dir: str | Path, *, dtype: torch.dtype, device: torch.device, trust_remote_code: bool
) -> tuple[torch.nn.Module, Any, str]:
    """(model, tokenizer, model_type) of a fetched causal-LM checkpoint, with clear errors."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(checkpoint_dir)
    _check_checkpoint(folder)
    model_type = read_model_type(folder)
    if model_type not in CAUSAL_LM_TYPES:
        raise LoraBaseModelError(
            f"{folder} is a {model_type!r} model; the LoRA run knows the causal LMs {list(CAUSAL_LM_TYPES)} "
            f"(isonorm.experiments.lu2024.lora.CAUSAL_LM_TYPES). Point `{CONFIG_KEY}` at one of those."
        )
    remote = model_type == "qwen"  # Qwen v1 ships no transformers class: its code lives in the repository
    if remote:
        missing = [p for p in QWEN_V1_PACKAGES if importlib.util.find_spec(p) is None]
        if missing:
            raise LoraBaseModelError(_remote_code_help(model_type, ImportError(f"missing {', '.join(missing)}")))
        if not trust_remote_code:
            raise LoraBaseModelError(
                f"{folder} (Qwen v1) needs its repository's code; set `lu2024: table5: lora: trust_remote_code: "
                f"true` or point `{CONFIG_KEY}` at another base model"
            )
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=remote)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, trust_remote_code=remote)
    except Exception as err:  # remote code fails in many ways (ImportError, AttributeError, TypeError ...)
        if remote:
            raise LoraBaseModelError(_remote_code_help(model_type, err)) from err
        raise LoraBaseModelError(
            f"transformers could not load {folder} ({type(err).__name__}: {err}); fetch the checkpoint named by "
            f"`{CONFIG_KEY}` again or point it at another base model"
        ) from err
    return model.to(device), tokenizer, model_type


# --- measuring -----------------------------------------------------------------------------------------------


def layer_matrices(model: torch.nn.Module, model_type: str, layer: int) -> dict[str, tuple[str, torch.Tensor]]:
    """{Table-5 column: (parameter name, float64 CPU copy of the matrix)} of block ``layer``.

    The matrices are those Table 5 (c) reads from the checkpoint files (``checkpoint_pii.matrix_specs``); a
    spec's name is a suffix of the model's parameter name (``transformer.`` / ``model.`` prefixes).
    """
    params = dict(model.named_parameters())
    out = {}
    for spec in matrix_specs(model_type, layer):
        names = [n for n in params if n == spec.tensor or n.endswith("." + spec.tensor)]
        if len(names) != 1:
            n_blocks = getattr(getattr(model, "config", None), "num_hidden_layers", "?")
            raise LoraBaseModelError(
                f"the model has {len(names)} parameters named like {spec.tensor} (block {layer} of {n_blocks}); "
                "set `lu2024: table5: lora: layer` to an existing block"
            )
        weight = cut_matrix(spec, params[names[0]].detach())
        out[spec.cell] = (names[0], weight.to("cpu", torch.float64).clone())
    return out


def pii_rows(matrices: Mapping[str, tuple[str, torch.Tensor]], stage: str, orientations: Sequence[str]) -> list[dict]:
    """PII in blocks (``pii_chunked``): the 11008 row vectors of a 7B FFN never form a dense 11008² matrix."""
    rows = []
    for column, (name, weight) in matrices.items():
        for orientation in orientations:
            rows.append({"stage": stage, "matrix": column, "parameter": name, "orientation": orientation,
                         "metric": "pii", "value": float(pii_chunked(weight, orientation))})
    return rows


def change_rows(before: Mapping[str, tuple[str, torch.Tensor]], after: Mapping[str, tuple[str, torch.Tensor]]) -> list[dict]:
    """How much merging moved each matrix: relative Frobenius change, largest entry change, changed fraction."""
    rows = []
    for column, (name, w0) in before.items():
        delta = after[column][1] - w0
        values = {
            "relative_change": float(delta.norm() / w0.norm()),
            "max_abs_change": float(delta.abs().max()),
            "changed_fraction": float((delta != 0).double().mean()),
        }
        rows += [{"stage": "delta", "matrix": column, "parameter": name, "orientation": None, "metric": metric,
                  "value": value} for metric, value in values.items()]
    return rows


# --- data ----------------------------------------------------------------------------------------------------


def alpaca_prompt(example: Mapping[str, str]) -> str:
    """The Stanford Alpaca prompt of an example (with or without its input)."""
    key = "prompt_input" if example.get("input") else "prompt_no_input"
    return ALPACA_PROMPTS[key].format_map(example)


def eos_id(tokenizer: Any) -> int:
    """The end-of-sequence id (Qwen v1's tokenizer calls it ``eod_id``, as Firefly's script handles)."""
    value = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else getattr(tokenizer, "eod_id", None)
    if value is None:
        raise LoraBaseModelError("the tokenizer has no end-of-sequence token (eos_token_id / eod_id)")
    return int(value)


def tokenize_example(tokenizer: Any, example: Mapping[str, str], max_length: int) -> tuple[list[int], list[int]]:
    """(input_ids, labels): prompt + response + eos, cut to ``max_length``; the prompt's labels are IGNORE_INDEX."""
    prompt = tokenizer(alpaca_prompt(example), add_special_tokens=False)["input_ids"]
    response = tokenizer(example["output"], add_special_tokens=False)["input_ids"] + [eos_id(tokenizer)]
    ids = (prompt + response)[:max_length]
    labels = ([IGNORE_INDEX] * len(prompt) + response)[:max_length]
    return ids, labels


def trainable(pairs: Sequence[tuple[list[int], list[int]]], max_length: int) -> list[tuple[list[int], list[int]]]:
    """The examples that keep at least one response token after the cut to ``max_length``.

    A prompt of ``max_length`` tokens or more leaves no label, and a loss over zero tokens is NaN (it would
    poison the whole accumulation step); such examples are dropped and counted (column ``n_dropped``).
    """
    kept = [(ids, labels) for ids, labels in pairs if any(y != IGNORE_INDEX for y in labels)]
    if not kept:
        raise ValueError(
            f"every example's prompt fills max_length = {max_length} tokens, leaving no response to learn; raise "
            "`lu2024: table5: lora: max_length`"
        )
    if len(kept) < len(pairs):
        log.warning("%d of %d examples dropped: prompt of >= %d tokens", len(pairs) - len(kept), len(pairs), max_length)
    return kept


def collate(pairs: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded batch: input_ids, attention_mask, labels (IGNORE_INDEX on padding)."""
    length = max(len(ids) for ids, _ in pairs)
    ids = torch.full((len(pairs), length), pad_id, dtype=torch.long)
    labels = torch.full((len(pairs), length), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(pairs), length), dtype=torch.long)
    for i, (x, y) in enumerate(pairs):
        ids[i, :len(x)], labels[i, :len(y)], mask[i, :len(x)] = torch.tensor(x), torch.tensor(y), 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


# --- training ------------------------------------------------------------------------------------------------


def lora_targets(cfg: Mapping[str, Any], model_type: str) -> list[str]:
    try:
        return list(cfg["targets"][model_type])
    except KeyError:
        raise LoraBaseModelError(
            f"no LoRA targets for model_type {model_type!r}; add `{model_type}: [module names]` under "
            f"`lu2024: table5: lora: targets` (known: {sorted(cfg['targets'])})"
        ) from None


def with_lora(model: torch.nn.Module, cfg: Mapping[str, Any], model_type: str) -> torch.nn.Module:
    """``model`` as the job trains it: peft LoRA adapters of ``cfg``'s rank, alpha and dropout on its type's targets
    (the base frozen) and, where ``cfg`` asks, gradient checkpointing (non-reentrant, the inputs requiring grad so
    that the frozen embeddings pass a gradient to the checkpointed layers)."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(
        r=cfg["rank"], lora_alpha=cfg["alpha"], lora_dropout=cfg["dropout"],
        target_modules=lora_targets(cfg, model_type), bias="none", task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora)
    if cfg["gradient_checkpointing"]:
        # transformers 5's name (gradient_checkpointing_enable is its deprecated alias, gone in v6)
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    return model


def constant_with_warmup(step: int, warmup_steps: int) -> float:
    """lr factor of transformers' ``constant_with_warmup`` schedule (Firefly's Qwen-7B config)."""
    return min(1.0, step / warmup_steps) if warmup_steps > 0 else 1.0


class LoraStep:
    """One optimizer step of a peft LoRA model, as a step of the training engine (:class:`isonorm.train.Step`).

    One engine batch is one optimizer step: its examples are cut into micro-batches of ``batch_size``, each
    padded and back-propagated with weight 1/(micro-batches in the step), then the gradient is clipped at
    ``max_grad_norm`` and AdamW (``optimizer``, 32-bit states: Firefly's ``paged_adamw_32bit``, paging only
    moves memory) steps on the trainable (LoRA) parameters with a constant-with-warmup lr. One run (a 7B
    model per run cannot be stacked). ``max_steps`` (None: every batch) caps the optimizer steps of a smoke
    run; later batches are skipped. LoRA dropout draws from a stream seeded per (``seed``, epoch), so a resumed
    run continues exactly.
    """

    stats = ("train_loss",)

    def __init__(self, model: torch.nn.Module, examples: Sequence[tuple[list[int], list[int]]],
                 cfg: Mapping[str, Any], optimizer: OptimizerConfig, pad_id: int, device: torch.device, seed: int):
        self.model, self.examples, self.pad_id, self.seed = model, list(examples), pad_id, seed
        self.micro_batch, self.max_grad_norm, self.max_steps = cfg["batch_size"], cfg["max_grad_norm"], cfg["max_steps"]
        self.n_runs, self.n_samples, self.device = 1, len(self.examples), device
        self.params = {name: p for name, p in model.named_parameters() if p.requires_grad}
        self.optimizer = build_optimizer(self.params.values(), optimizer)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: constant_with_warmup(step, cfg["warmup_steps"])
        )
        self.step_losses: list[float] = []  # the mean micro-batch loss of every optimizer step
        self._epoch_losses: list[float] = []

    @contextlib.contextmanager
    def epoch(self, epoch: int) -> Iterator[None]:
        self._epoch_losses = []
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(derive_seed("lu2024", "table5-lora", self.seed, "dropout", epoch))
            self.model.train()
            try:
                yield
            finally:
                self.model.eval()

    def __call__(self, index: torch.Tensor) -> None:
        if self.max_steps is not None and len(self.step_losses) >= self.max_steps:
            return
        ids = index[0].tolist()
        groups = [ids[i:i + self.micro_batch] for i in range(0, len(ids), self.micro_batch)]
        total, run = 0.0, 0
        for group in sampled(groups):  # every micro-batch but under a step cap (docs/cost.md)
            run += 1
            inputs = {k: v.to(self.device) for k, v in collate([self.examples[i] for i in group], self.pad_id).items()}
            loss = self.model(**inputs).loss
            (loss / len(groups)).backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(list(self.params.values()), self.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step_losses.append(total / run)
        self._epoch_losses.append(self.step_losses[-1])
        if len(self.step_losses) % 20 == 0:
            log.info("LoRA step %d, loss %.4f", len(self.step_losses), self.step_losses[-1])

    def epoch_stats(self, n_batches: int, n_samples: int) -> dict[str, torch.Tensor]:
        """``train_loss``: the mean loss of the epoch's optimizer steps."""
        mean = sum(self._epoch_losses) / len(self._epoch_losses) if self._epoch_losses else math.nan
        return {"train_loss": torch.tensor([mean], dtype=torch.float64)}

    def fingerprint(self) -> dict:
        return {"examples": self.n_samples, "micro_batch": self.micro_batch,
                "lora": {name: list(p.shape) for name, p in self.params.items()}}

    def state_dict(self) -> dict:
        return {"lora": {name: p.detach() for name, p in self.params.items()}, "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(), "step_losses": list(self.step_losses)}

    def load_state_dict(self, state: dict) -> None:
        with torch.no_grad():
            for name, tensor in state["lora"].items():
                self.params[name].copy_(tensor)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step_losses = list(state["step_losses"])


def lora_optimizer(cfg: Mapping[str, Any]) -> OptimizerConfig:
    """AdamW at ``cfg``'s lr and weight decay, on the trainable (LoRA) parameters (:class:`LoraStep`)."""
    return OptimizerConfig(name="adamw", lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))


def fine_tune(model: torch.nn.Module, examples: Sequence[tuple[list[int], list[int]]], cfg: Mapping[str, Any],
              pad_id: int, device: torch.device, seed: int, checkpoint: str | Path | None = None) -> list[float]:
    """``cfg["epochs"]`` epochs of LoRA training on the engine (one run, named by ``seed``, whose batch orders
    the engine seeds per epoch); returns the loss of every optimizer step. ``checkpoint``: resume file."""
    optimizer = lora_optimizer(cfg)
    config = TrainConfig(
        experiment="lu2024", variant="table5-lora", epochs=int(cfg["epochs"]),
        batch_size=int(cfg["batch_size"]) * int(cfg["grad_accumulation"]), optimizer=optimizer,
        measure_at_init=False, checkpoint_path=checkpoint, device=device,
    )
    step = LoraStep(model, examples, cfg, optimizer, pad_id, device, seed)
    train_epochs(step, config, run_ids=[seed])
    return step.step_losses


def _dtype(setting: str | dict[str, str], device: torch.device) -> torch.dtype:
    """The base model's dtype: a name, or one per device type (``{cuda: bfloat16, cpu: float32}``: the shapes
    preset measures the paper's bf16 on a GPU, fp32 on a CPU where bf16 products are ~300× slower, docs/cost.md)."""
    dtypes = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
    name = setting.get(device.type) if isinstance(setting, dict) else setting
    if name not in dtypes:
        on = f" for device type {device.type!r}" if isinstance(setting, dict) else ""
        raise ValueError(f"lu2024: table5: lora: dtype{on} must be one of {sorted(dtypes)}, got {name!r}")
    return dtypes[name]


def _note_truncated_depth(checkpoint_dir: str | Path, model: torch.nn.Module) -> None:
    """A base model cut in depth (the shapes preset's Qwen stand-in, source `random`): the cost
    projection scales to the real depth, a layer's weights being those of block 0."""
    from ...checkpoints import checkpoint_record
    from ...checkpoints.full_size import truncated_depth

    cut = truncated_depth(checkpoint_record(checkpoint_dir))
    if cut is not None:
        layer_bytes = sum(p.numel() * p.element_size() for name, p in model.named_parameters() if ".layers.0." in name)
        scale_depth(*cut, layer_bytes)


def table5_lora(
    cfg: Mapping[str, Any], *, checkpoint_dir: str | Path, instructions: str | Path, seed: int,
    device: str = "auto",
) -> pd.DataFrame:
    """Rows (seed, stage, matrix, parameter, orientation, metric, value, step, layer, model_type, checkpoint, ...).

    ``cfg`` (``lu2024: table5: lora:``): ``layer``, ``rank``, ``alpha``, ``dropout``, ``targets`` (by model_type),
    ``lr``, ``epochs``, ``max_length``, ``batch_size``, ``grad_accumulation``, ``warmup_steps``,
    ``max_grad_norm``, ``weight_decay``, ``max_steps`` (None: the whole epoch), ``gradient_checkpointing``,
    ``dtype``, ``n_examples``, ``orientations``, ``trust_remote_code``. ``checkpoint_dir``: a fetched checkpoint
    folder; ``instructions``: a fetched instruction set (:func:`isonorm.data.instructions.fetch_instructions`).
    """
    from ...checkpoints import checkpoint_record, describe_checkpoint

    torch_device = resolve_device(device)
    dtype = _dtype(cfg["dtype"], torch_device)
    examples = load_instructions(instructions, cfg["n_examples"])
    devices = [torch_device.index or 0] if torch_device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)  # decision A13: seed 42 (LoRA A init and dropout draws)
        model, tokenizer, model_type = load_base(
            checkpoint_dir, dtype=dtype, device=torch_device, trust_remote_code=cfg["trust_remote_code"]
        )
        _note_truncated_depth(checkpoint_dir, model)
        before = layer_matrices(model, model_type, cfg["layer"])
        model = with_lora(model, cfg, model_type)
        tokenized = trainable(
            [tokenize_example(tokenizer, e, cfg["max_length"]) for e in examples], cfg["max_length"]
        )
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_id(tokenizer)
        losses = fine_tune(model, tokenized, cfg, pad, torch_device, seed)
        merged = model.merge_and_unload()
        after = layer_matrices(merged, model_type, cfg["layer"])

    orientations = list(cfg["orientations"])
    rows = pii_rows(before, "before", orientations) + pii_rows(after, "after", orientations)
    rows += change_rows(before, after)
    rows += [{"stage": "train", "matrix": None, "parameter": None, "orientation": None, "metric": "loss",
              "value": loss, "step": step + 1} for step, loss in enumerate(losses)]
    frame = pd.DataFrame(rows)
    frame["step"] = frame.get("step", pd.Series(dtype=float)).astype("Int64")
    n_tokens = sum(len(ids) for ids, _ in tokenized)
    frame = frame.assign(
        seed=seed, layer=cfg["layer"], model_type=model_type,
        checkpoint=describe_checkpoint(checkpoint_record(checkpoint_dir)),
        instructions_source=describe_instructions(instructions), n_examples=len(examples),
        n_dropped=len(examples) - len(tokenized),
        train_tokens=n_tokens * cfg["epochs"], optimizer_steps=len(losses), dtype=cfg["dtype"],
        rank=cfg["rank"], alpha=cfg["alpha"], targets=",".join(lora_targets(cfg, model_type)),
    )
    if not all(math.isfinite(v) for v in losses):
        log.warning("non-finite LoRA training loss: %s", losses)
    return frame


def table5_lora_runs(
    cfg: Mapping[str, Any], *, checkpoint_dir: str | Path, instructions: str | Path, device: str = "auto"
) -> pd.DataFrame:
    """lu2024-table5 (d): :func:`table5_lora` for every seed of ``cfg["seeds"]``, one after another, in one frame.

    One job per variant holding all its runs (architecture §3); a 7B model per run cannot be stacked, so the runs are
    sequential, each loading the base afresh (the merge modifies it).
    """
    return pd.concat(
        [table5_lora(cfg, checkpoint_dir=checkpoint_dir, instructions=instructions, seed=int(seed), device=device)
         for seed in cfg["seeds"]],
        ignore_index=True,
    )
