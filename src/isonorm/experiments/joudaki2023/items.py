"""Every item of Joudaki, Daneshmand, Bach (NeurIPS 2023), once (isonorm.items): its title as its section in
docs/decisions/joudaki2023.md heads it, the job that computes it, the results it reads and its claims."""

from ...items import Item
from . import gpt2_probe, gpt2_summaries, image_mlp_summaries, image_mlps, simulation_summaries, simulations, strengths

BETA, SIM, MLP = strengths.claims, simulation_summaries.claims, image_mlp_summaries.claims
# The two items of one decision section (Fig. 8, panels a and b).
FIG8 = '(a) "self-normalizing" activations, (b) order of activation and normalization'

ITEMS = (
    # drawn by the notebook, without results
    Item("joudaki2023-fig1", "Geometric interpretation of isometry (schematic)", "notebook"),
    Item("joudaki2023-table1", "Building blocks", "notebook"),
    # β in closed form, by quadrature and by Monte Carlo: one job per item
    Item("joudaki2023-table2", "Closed-form isometry strengths", "simulation", strengths.isometry_strengths,
         ("table2",), BETA),
    Item("joudaki2023-tableb1", "β as a function of the gain α", "simulation", strengths.isometry_strengths,
         ("tableb1",), BETA),
    Item("joudaki2023-figb1", "β vs the gain α", "simulation", strengths.isometry_strengths, ("figb1",), BETA),
    # the mean-field simulator: one job per grid, and one per alternative reading of a grid (decision D19)
    Item("joudaki2023-fig4", "Layer centering vs mean-field centering", "simulation", simulations.run_grid,
         ("fig4",), SIM),
    Item("joudaki2023-fig5", "No normalization vs LayerNorm (mean-field centering)", "simulation",
         simulations.run_grid, ("fig5_6",), SIM),  # one grid for Figs. 5 and 6
    Item("joudaki2023-fig6", "LayerNorm vs mean-field normalization", "simulation", simulations.run_grid,
         ("fig5_6",), SIM),
    Item("joudaki2023-fig8a", FIG8, "simulation", simulations.run_grid, ("fig8a",), SIM),
    Item("joudaki2023-fig8b", FIG8, "simulation", simulations.run_grid, ("fig8b",), SIM),
    Item("joudaki2023-fig9", "LayerNorm stabilises the mean-field approximation through depth (ReLU)", "simulation",
         simulations.run_grid, ("fig9",), SIM),
    Item("joudaki2023-figa1", "Lyapunov potential γ vs depth, with the bound of Corollary A.3", "simulation",
         simulations.run_grid, ("figa1",), SIM),
    Item("joudaki2023-figb2", "The gain and the speed of reaching isometry", "simulation", simulations.run_grid,
         ("figb2",), SIM),
    Item("joudaki2023-figb3", "Mean-field centering and normalization vs Xavier gain", "simulation",
         simulations.run_grid, ("figb3",), SIM),
    # image MLPs: trained run sets (each feeds two items) and fresh networks
    Item("joudaki2023-fig2", "LayerNorm never decreases isometry (tanh, at init and after training)", "training",
         image_mlps.train_run_set, ("fig2_runs",), MLP),
    Item("joudaki2023-figb6", "Isometry through the modules for many activations", "training",
         image_mlps.train_run_set, ("fig2_runs",), MLP),  # the Fig. 2 runs, more activations
    Item("joudaki2023-fig3", "Theorem 4 on CIFAR10 at initialisation (n = 100, d = 5000)", "at_init",
         image_mlps.fig3, ("fig3",), MLP),
    Item("joudaki2023-figb4", "Variable-width MLPs at initialisation (ReLU; MNIST and CIFAR10)", "at_init",
         image_mlps.figb4, ("figb4",), MLP),
    Item("joudaki2023-fig7", "β_σ and the speed of SGD training", "training", image_mlps.train_run_set,
         ("fig7_runs",), MLP),
    Item("joudaki2023-figb7", "The isometry gap changes little during training", "training",
         image_mlps.train_run_set, ("fig7_runs",), MLP),  # the Fig. 7 runs
    # GPT-2's submodules
    Item("joudaki2023-figb5", "Isometry gap across the modules of pre-trained GPT-2 (last blocks)", "at_init",
         gpt2_probe.figb5, ("figb5",), gpt2_summaries.claims),
)
