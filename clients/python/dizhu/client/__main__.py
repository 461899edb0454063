"""``python -m dizhu.client``: play a bot for one seat of a table (see :mod:`dizhu.client.command`)."""

from dizhu.client.command import main

raise SystemExit(main(prog="python -m dizhu.client"))
