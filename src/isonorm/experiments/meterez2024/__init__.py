"""Meterez et al. (ICLR 2024): batch normalization without gradient explosion, at any depth.

- ``at_init``             Figs. 1, 2, 3, 5 (= G5), G6, E1, E2: isometry gaps, gradient log-norms and explosion
                          rates of fresh BN-MLPs (``isonorm.models.bn_mlp``, runs stacked); ``at_init_summaries``
- ``input_rank``          Table D1: ranks and cosines of input-batch Gram matrices
- ``training_grid``       Figs. 4, 6, F1, F2, G1–G4: the 1000-epoch grid, all activations of a (data-set group, depth)
                          in one job on the fast stacked step (``isonorm.train.fast_step``); ``training_summaries``

Each module declares the items its functions compute, with their results and claims (``ITEMS``, isonorm.items).
The checkable quantities the scoreboard compares with the paper: the ``claims`` function of each ``*_summaries``
module, as the records name them.
"""

SLUG = "meterez2024"
