"""isonorm: reproduce four papers on normalization, orthogonality and isometry of deep networks.

Subpackages (each short and single-purpose):

- ``metrics``     every measured quantity (orthogonality gap, isometry, β, PII, ...), float64
- ``sources``     the one fetch mechanism: ``.ready`` markers, Hub calls and their errors, staging
- ``data``        data sets, text corpora, WikiText-2, Alpaca: sources, own readers, device-resident tensors
- ``checkpoints`` pre-trained models: pinned download of the needed shards, local folders, tiny stand-ins
- ``models``      network definitions and special initialisations
- ``simulate``    random-network chains (BN / vanilla) batched over runs; the mean-field simulator
- ``train``       the one training engine (stacked runs, pluggable steps, resumable checkpoints)
- ``experiments`` one subpackage per paper: config in, tidy DataFrame out
- ``report``      notebook helpers, scoreboard, HTML index
- ``results``     Parquet contract (tidy, metadata, atomic writes)
"""

__version__ = "0.1.0"
