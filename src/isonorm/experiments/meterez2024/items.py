"""Every item of Meterez et al. (ICLR 2024), once (isonorm.items): its title as its section in
docs/decisions/meterez2024.md heads it, the job that computes it, the results it reads and its claims."""

from ...items import Item
from . import at_init, at_init_summaries, input_rank, training_grid, training_summaries

AT_INIT, GRID = at_init_summaries.claims, training_summaries.claims

ITEMS = (
    Item("meterez2024-fig1", "Isometry gap through depth vs Theorem 1", "simulation", at_init.fig1, ("fig1",), AT_INIT),
    Item("meterez2024-fig2", "Gradients at init: degenerate vs non-degenerate inputs", "at_init",
         at_init.gradient_sweep, ("fig2",), AT_INIT),
    Item("meterez2024-fig3", "Orthogonal vs Gaussian weights: gradients through depth", "at_init",
         at_init.gradient_sweep, ("fig3",), AT_INIT),
    Item("meterez2024-fig4", "Training accuracy on CIFAR10 at depths 100, 500, 1000", "training",
         training_grid.train_grid_job, ("training",), GRID),
    Item("meterez2024-fig5", "Effect of the gain on gradients at init", "at_init", at_init.gradient_sweep, ("fig5",),
         AT_INIT),
    Item("meterez2024-fig6", "Implicit orthogonality bias of SGD (depth 1000, tanh)", "training",
         training_grid.train_grid_job, ("training",), GRID),
    Item("meterez2024-tabled1", "Rank of input-batch Gram matrices", "at_init", input_rank.tabled1, ("tabled1",),
         AT_INIT),
    Item("meterez2024-fige1", "Rate of explosion vs a constant gain (depth 1000)", "at_init", at_init.gradient_sweep,
         ("fige1",), AT_INIT),
    Item("meterez2024-fige2", "Rate of explosion at ℓ = 10 vs the gain exponent", "at_init", at_init.gradient_sweep,
         ("fige2",), AT_INIT),
    Item("meterez2024-figf1", "Weight isometry gap during training (depths 100, 500, 1000)", "training",
         training_grid.train_grid_job, ("training",), GRID),
    Item("meterez2024-figf2", "Gradient norms during training", "training", training_grid.train_grid_job,
         ("training",), GRID),
    Item("meterez2024-figg1", "Train and test accuracy on MNIST", "training", training_grid.train_grid_job,
         ("training",), GRID),
    Item("meterez2024-figg2", "Train and test accuracy on FashionMNIST", "training", training_grid.train_grid_job,
         ("training",), GRID),
    Item("meterez2024-figg3", "Train and test accuracy on CIFAR100", "training", training_grid.train_grid_job,
         ("training",), GRID),
    Item("meterez2024-figg4", "Test accuracy on CIFAR10", "training", training_grid.train_grid_job, ("training",),
         GRID),
    Item("meterez2024-figg5", "Non-linearities without shaping", "at_init", at_init.gradient_sweep, ("fig5",),
         AT_INIT),  # the same runs as Fig. 5
    Item("meterez2024-figg6", "Mean reduction and gradient explosion", "at_init", at_init.gradient_sweep, ("figg6",),
         AT_INIT),
)
