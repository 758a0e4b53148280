"""Every item of Lu et al. (IJCAI 2024), once (isonorm.items): its title as its section in
docs/decisions/lu2024.md heads it, the job that computes it, the results it reads and its claims."""

from ...items import Item
from . import checkpoint_pii, lora, table5_summaries, trained_nets, trained_summaries, wikitext_transformer

TRAINED = trained_summaries.claims

ITEMS = (
    Item("lu2024-fig1", "Cosine-similarity and Gram matrix at initialisation", "simulation", trained_nets.fig1,
         ("fig1",), TRAINED),
    Item("lu2024-table1", "Optimisers' \"conformal capability\" in FNNs (MNIST)", "training", trained_nets.fnn,
         ("table1",), TRAINED),
    Item("lu2024-table2", "Optimisers' \"conformal capability\" in CNNs (CIFAR-10)", "training",
         trained_nets.simple_cnn, ("table2",), TRAINED),
    # drawn from the weights the Table-3 jobs save; nothing measured
    Item("lu2024-fig2", "Cosine-similarity and Gram matrices with and without norm + residual (FNN)", "training",
         trained_nets.fnn, ("table3_weights",)),
    Item("lu2024-table3", "Norm + residual vs Original in FNNs (MNIST)", "training", trained_nets.fnn, ("table3",),
         TRAINED),
    Item("lu2024-table4", "Norm + residual vs Original in CNNs (CIFAR-10, ResNet-18)", "training",
         trained_nets.resnet18, ("table4",), TRAINED),
    # a static table drawn by the notebook, no results and nothing measured
    Item("lu2024-apptable1", "Notation", "notebook"),
    Item("lu2024-apptable2", "Optimisers on CIFAR-100 (SimpleCNN)", "training", trained_nets.simple_cnn,
         ("apptable2",), TRAINED),
    Item("lu2024-apptable3", "Norm + residual vs Original, ResNet-18 on CIFAR-100", "training", trained_nets.resnet18,
         ("apptable3",), TRAINED),
    Item("lu2024-apptable4", "Normalisation only, residual only", "training", trained_nets.fnn, ("apptable4",),
         TRAINED),
    # the training course of Table 5's part (a), a supplementary figure; the row's quantities are lu2024-table5's
    Item("lu2024-table5-transformer", "Transformer trained on WikiText-2", "training",
         wikitext_transformer.table5_transformer, ("table5_transformer",)),
    # one table from the results of three jobs: (a) the Transformer's training (the job of
    # lu2024-table5-transformer), (b)/(c) the pre-trained checkpoints read at init, (d) the LoRA fine-tuning
    Item("lu2024-table5", "PII of attention and FFN matrices in Transformers, PLMs, LLMs and after LoRA",
         ("training", "at_init", "training"),
         (wikitext_transformer.table5_transformer, checkpoint_pii.table5_checkpoints, lora.table5_lora_runs),
         ("table5_transformer", "table5_plms", "table5_llms", "table5_lora"), table5_summaries.claims),
)
