"""Lu, Sun, Yang, Zhou, Lin (IJCAI 2024): the orthogonality of weight vectors, measured by PII.

- ``trained_nets``          Tables 1–4, App. Tables 2–4 and the weights behind Fig. 2: MNIST FNNs, the
                            SimpleCNN and ResNet-18 on CIFAR-10/100, trained on the shared engine; Fig. 1's
                            freshly drawn FNN (no data);
                            reductions in ``trained_summaries`` (also App. Table 1, the notation)
- ``wikitext_transformer``  Table 5 (a): a six-layer word-level Transformer on WikiText-2; ``wikitext_summaries``
- ``checkpoint_pii``        Table 5 (b), (c): PII of one layer of PLM / LLM checkpoints, read tensor by tensor
                            from the safetensors shards; ``checkpoint_summaries``
- ``lora``                  Table 5 (d): LoRA fine-tuning with peft, merged, PII before and after; ``lora_summaries``

Each module declares the items its functions compute, with their results and claims (``ITEMS``, isonorm.items);
this one, the notation table the notebook draws. The checkable quantities the scoreboard compares with the paper:
``trained_summaries.claims`` and ``table5_summaries.claims``, which gathers Table 5's parts from the other
``*_summaries`` modules.
"""

from ...items import Item

SLUG = "lu2024"

ITEMS = (Item("lu2024-apptable1", "Notation", "notebook"),)  # a static table, no results and nothing measured
