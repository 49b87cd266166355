"""The reports as a core model: what a check decided and what a run did, as plain data.

``models`` holds the check report's types (a call, an input, the whole check); ``records``
its JSON result records and the JSON report built from them; ``recap`` its one-line
summary; ``shards`` which inputs a ``--shard K/N`` job checks; ``exec`` the report of a
run (``toolrun exec``). Below ``commands``, ``render`` and ``policy``, which import it;
it imports none of them, nor click.
"""
