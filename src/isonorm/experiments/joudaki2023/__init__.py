"""Joudaki, Daneshmand, Bach (NeurIPS 2023): isometry at initialization and the isometry strength β.

- ``strengths``            Tables 2, B.1 and Fig. B.1: β in closed form, by quadrature and by Monte Carlo;
                           their claims in ``strengths_summaries``
- ``schematic``            Fig. 1, drawn (no data)
- ``simulations``          Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2, B.3 on the mean-field simulator
                           (``isonorm.simulate.mean_field``); reductions in ``simulation_summaries``
- ``image_mlps``           Figs. 2, 3, 7, B.4, B.6, B.7: LayerNorm MLPs on images, at init and trained;
                           reductions in ``image_mlp_summaries``
- ``gpt2_probe``           Fig. B.5: isometry gap across GPT-2's submodules; reductions in ``gpt2_summaries``

Each module declares the items its functions compute, with their results and claims (``ITEMS``, isonorm.items);
this one, the table the notebook draws. The checkable quantities the scoreboard compares with the paper: the
``claims`` function of each ``*_summaries`` module, by item id, as the records name them.
"""

from ...items import Item

SLUG = "joudaki2023"

ITEMS = (Item("joudaki2023-table1", "Building blocks", "notebook"),)  # drawn by the notebook, without results
