"""The referee: tables, seats and rounds, commands applied to them, and who may see what.

Pure like the rules core (no gRPC, no Redis): the service loads a ``TableState``, runs a
command from ``commands`` and saves the result.
"""

from dizhu.referee.table import TableState
from dizhu.referee.table_codec import decode, encode

__all__ = ["TableState", "decode", "encode"]
