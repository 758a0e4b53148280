"""Results bundles: a run's results carried to another checkout, checked there, and said where they came from
(docs/bundles.md).

- ``manifest``   the archive's format: a tar file with ``manifest.json`` and the results files, each with its SHA-256,
                 item, job, provenance and fingerprints; reading one checks every checksum
- ``export``     a bundle of the results files of a run (all that exist, or the items named)
- ``importing``  a run's ``bundles:`` placed into its results folder at parse time: verified, current files placed,
                 stale ones named, conflicts stopped
- ``ledger``     ``<results root>/imported.json``: which files came from which bundle; each file's and each item's
                 origin, the text of the scoreboard's ``origin`` column
- ``__main__``   ``python -m isonorm.bundles export | verify | list``
"""
