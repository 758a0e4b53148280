"""Drawing helpers of one paper's page, shared by several of its items: ``pages.<slug>`` serves
``notebooks/<slug>.py``. A helper that pages of several papers use belongs one level up, in ``isonorm.report``.
Like the rest of ``isonorm.report``, nothing here imports ``isonorm.experiments``: a page gets its summaries from
the notebook, which imports both."""
