"""isonorm: reproduce four papers on normalization, orthogonality and isometry of deep networks.

Subpackages (each short and single-purpose):

- ``metrics``     every measured quantity (orthogonality gap, isometry, β, PII, ...), float64
- ``simulate``    random-network chains (BN / vanilla), batched over runs
- ``data``        data-set registry, download / local / synthetic sources, device-resident tensors
- ``models``      network definitions and special initialisations
- ``train``       the shared training engine (stacked runs, resumable checkpoints)
- ``experiments`` one module per paper: config in, tidy DataFrame out
- ``report``      notebook helpers, scoreboard, HTML index
- ``results``     Parquet contract (tidy, metadata, atomic writes)
"""

__version__ = "0.1.0"
