"""Every item of Daneshmand et al. (NeurIPS 2021), once (isonorm.items): its title as its section in
docs/decisions/daneshmand2021.md heads it, the job that computes it, the results it reads and its claims."""

from ...items import Item
from . import claims, deep_convnets, depth_training, layer_profiles, simulations

CLAIMS = claims.claims

ITEMS = (
    Item("daneshmand2021-fig1", "Warm-up: |cos| of two samples through depth, BN vs vanilla", "simulation",
         simulations.warmup_cosine, ("fig1",), CLAIMS),
    Item("daneshmand2021-fig2a", "Log orthogonality gap through depth", "simulation", simulations.gap_through_depth,
         ("fig2a",), CLAIMS),
    Item("daneshmand2021-fig2b", "Average gap vs width (log–log)", "simulation", simulations.gap_through_depth,
         ("fig2b",), CLAIMS),
    Item("daneshmand2021-fig3", "Validity of Assumption A1 over (n, d)", "simulation",
         simulations.assumption_a1_grid, ("fig3",), CLAIMS),
    # static tables drawn by the notebook, no results and nothing measured
    Item("daneshmand2021-table1", "Gaussian approximation of representations", "notebook"),
    # Figs. 4a and 5 share their training runs
    Item("daneshmand2021-fig4a", "Initial gap and training loss after 30 epochs vs depth", "training",
         depth_training.train_depth_variant, ("depth_training",), CLAIMS),
    Item("daneshmand2021-fig4b", "Gap and training loss during training (20 layers)", "training",
         depth_training.train_gap_during_training, ("fig4b",), CLAIMS),
    Item("daneshmand2021-fig5", "Iterative orthogonalisation vs Xavier", "training",
         depth_training.train_depth_variant, ("depth_training",), CLAIMS),
    Item("daneshmand2021-apptable2", "Notation", "notebook"),
    # App. Figs. 6a and 6b split one result key by architecture, 7a and 7b one by number of extra layers
    Item("daneshmand2021-appfig6a", "BN vs vanilla gap through the layers of a ReLU MLP", "at_init",
         layer_profiles.gap_profile, ("appfig6",), CLAIMS),
    Item("daneshmand2021-appfig6b", "The same for a ConvNet", "at_init", layer_profiles.gap_profile, ("appfig6",),
         CLAIMS),
    Item("daneshmand2021-appfig7a", "SVD-based initialisation for deep ConvNets (Appendix I)", "training",
         deep_convnets.train_deep_convnet, ("appfig7",), CLAIMS),
    Item("daneshmand2021-appfig7b", "SVD-based initialisation for deep ConvNets (Appendix I)", "training",
         deep_convnets.train_deep_convnet, ("appfig7",), CLAIMS),
    Item("daneshmand2021-appfigg",
         "Appendix-G conjecture: fluctuations of the Gram matrix for non-linear activations", "simulation",
         simulations.activation_fluctuations, ("appfigg",), CLAIMS),
    # not reproducible (decision B11): the notebook says why, nothing is computed
    Item("daneshmand2021-apph", "Comparison with Brock et al. (2021)", "notebook"),
)
