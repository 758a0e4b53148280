"""Network definitions and special initialisations.

- ``mlp``                 plain MLPs (Linear + activation), the training engine's workhorse
- ``random_profile_nets`` the untrained MLP / ConvNet of daneshmand2021 Appendix Fig. 6
- ``alexnet_deep``        the AlexNet-style ConvNet with extra layers of daneshmand2021 Appendix Fig. 7
- ``orthogonal_init``     the SVD-based inits of daneshmand2021 Fig. 5 and Appendix Fig. 7
"""
