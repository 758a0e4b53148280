"""The tests' own tools: the headless-browser check of a built report (``browser_check``, its page-specific parts in
``browser_pages``). Not part of the product: only tests import them (``from tools.browser_check import ...``)."""
