"""Joudaki, Daneshmand, Bach (NeurIPS 2023): isometry at initialization and the isometry strength β.

- ``strengths``            Tables 2, B.1 and Fig. B.1: β in closed form, by quadrature and by Monte Carlo
- ``schematic``            Fig. 1, drawn (no data)
- ``simulations``          Figs. 4, 5, 6, 8a, 8b, 9, A.1, B.2, B.3 on the mean-field simulator
                           (``isonorm.simulate.mean_field``); reductions in ``simulation_summaries``
- ``image_mlps``           Figs. 2, 3, 7, B.4, B.6, B.7: LayerNorm MLPs on images, at init and trained;
                           reductions in ``image_mlp_summaries``
- ``gpt2_probe``           Fig. B.5: isometry gap across GPT-2's submodules; reductions in ``gpt2_summaries``
- ``items``                every item once: its title, job, results and claims (``isonorm.items``)

The checkable quantities the scoreboard compares with the paper: the ``claims`` function of ``strengths``
and of each ``*_summaries`` module, by item id, as ``items`` names them.
"""

SLUG = "joudaki2023"

# Items that share one function, which takes the item as its ``item`` argument (docs/architecture.md). Light
# on purpose (no torch import): the workflow's rules import these lists.
STRENGTH_ITEMS = ("table2", "tableb1", "figb1")  # strengths.isometry_strengths: β tables and β(α)
# simulations.run_grid: the mean-field simulator; one grid (fig5_6) feeds both Figs. 5 and 6
SIMULATION_ITEMS = ("fig4", "fig5_6", "fig8a", "fig8b", "fig9", "figa1", "figb2", "figb3")
