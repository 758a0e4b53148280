"""Meterez et al. (ICLR 2024): batch normalization without gradient explosion, at any depth.

- ``at_init``             Figs. 1, 2, 3, 5 (= G5), G6, E1, E2: isometry gaps, gradient log-norms and explosion
                          rates of fresh BN-MLPs (``isonorm.models.bn_mlp``, runs stacked); ``at_init_summaries``
- ``input_rank``          Table D1: ranks and cosines of input-batch Gram matrices
- ``training_grid``       Figs. 4, 6, F1, F2, G1–G4: the 1000-epoch grid, all activations of a (data-set stack, depth)
                          in one job on the fast stacked step (``isonorm.train.fast_step``); ``training_summaries``

The checkable quantities the scoreboard compares with the paper: the ``claims`` function of each
``*_summaries`` module, registered in rules/meterez2024.smk.
"""

SLUG = "meterez2024"

# Items that share one function, which takes the item as its ``item`` argument (docs/architecture.md). Light
# on purpose (no torch import): the workflow's rules import these lists.
SWEEP_ITEMS = ("fig2", "fig3", "fig5", "figg6", "fige1", "fige2")  # at_init.gradient_sweep; fig5 also gives G5
