"""Daneshmand, Joudaki, Bach (NeurIPS 2021): Batch normalization orthogonalizes representations.

- ``simulations``    Fig. 1, 2a, 2b, 3 and the Appendix-G figure (random chains, no data)
- ``depth_training`` Fig. 4a, 4b and 5 (CIFAR-10 MLPs, Xavier vs iterative orthogonalisation)
- ``layer_profiles`` Appendix Fig. 6a/6b (orthogonality gap through random BN / vanilla networks)
- ``deep_convnets``  Appendix Fig. 7a/7b (AlexNet-style ConvNets, Xavier vs SVD init)
- ``claims``         the checkable quantities the scoreboard compares with the paper (``claims.claims``)
- ``items``          every item once: title, job, results and claims (``items.ITEMS``, isonorm.items)
"""

SLUG = "daneshmand2021"
