"""The check report as a core model: what was decided, and its records and recap.

``models`` holds the report's types (a call, an input, the whole check); ``records`` the
JSON result records and the JSON report built from them; ``recap`` the one-line summary;
``shards`` which inputs a ``--shard K/N`` job checks. Below ``commands`` and ``render``,
which both import it; it imports neither.
"""
