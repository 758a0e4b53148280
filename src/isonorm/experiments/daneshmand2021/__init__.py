"""Daneshmand, Joudaki, Bach (NeurIPS 2021): Batch normalization orthogonalizes representations.

- ``simulations``     Fig. 1, 2a, 2b, 3 and the Appendix-G figure (random chains, no data)
- ``depth_training``  Fig. 4a, 4b and 5 (CIFAR-10 MLPs, Xavier vs iterative orthogonalisation)
- ``layer_profiles``  Appendix Fig. 6a/6b (orthogonality gap through random BN / vanilla networks)
- ``deep_convnets``   Appendix Fig. 7a/7b (AlexNet-style ConvNets, Xavier vs SVD init)
- ``paper_summaries`` the reductions the notebook and the scoreboard share, and the checkable quantities the
                      scoreboard compares with the paper (``paper_summaries.claims``), for every item

Each module declares the items its functions compute (``ITEMS``, isonorm.items); this one, those the notebook
draws without results.
"""

from ...items import Item

SLUG = "daneshmand2021"

ITEMS = (
    # static tables drawn by the notebook, no results and nothing measured
    Item("daneshmand2021-table1", "Gaussian approximation of representations", "notebook"),
    Item("daneshmand2021-apptable2", "Notation", "notebook"),
    # not reproducible (decision B11): the notebook says why, nothing is computed
    Item("daneshmand2021-apph", "Comparison with Brock et al. (2021)", "notebook"),
)
