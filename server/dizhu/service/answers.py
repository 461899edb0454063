"""How a response is recorded for retries without the tokens it hands out, and read back.

A recorded answer is the request's fingerprint (so that a request id used again for another
request is refused) followed by the response, in which every token is replaced by its
recipe (``dizhu.referee.tokens``): a recipe gives nothing without the server's key, so a
recorded answer holds no secret. Reading it back re-mints each token from its recipe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Final, Generic, TypeVar

from google.protobuf.message import Message

from dizhu.referee.errors import RequestIdReused
from dizhu.referee.tokens import TokenKeys

__all__ = ["Answers", "TokenFields", "fingerprint"]

ResponseT = TypeVar("ResponseT", bound=Message)
#: The (message, field name) pairs of a response that hold tokens.
TokenFields = Callable[[ResponseT], Iterable[tuple[Message, str]]]
_FINGERPRINT: Final = 32


def fingerprint(method: str, request: Message) -> bytes:
    """What identifies a request: its method and every field (unknown ones included)."""
    return hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).digest()


def _no_tokens(_: Message) -> Iterable[tuple[Message, str]]:
    return ()


class Answers(Generic[ResponseT]):
    """The recorded form of one method's responses (see the module docstring)."""

    def __init__(self, response_type: type[ResponseT], tokens: TokenFields[ResponseT] = _no_tokens) -> None:
        self._type = response_type
        self._tokens = tokens

    def seal(self, print_: bytes, response: ResponseT, recipes: dict[str, str]) -> bytes:
        """The answer to record: ``print_`` (the request's fingerprint), then the response, tokens as recipes."""
        sealed = response
        fields = list(self._tokens(response))
        if fields:
            sealed = self._type()
            sealed.CopyFrom(response)
            for message, name in self._tokens(sealed):
                setattr(message, name, recipes[getattr(message, name)])
        return print_ + sealed.SerializeToString()

    def open(self, answer: bytes, print_: bytes, table_id: str, keys: TokenKeys) -> ResponseT:
        """The response a recorded answer gives back to the request whose fingerprint is ``print_``.

        REQUEST_ID_REUSED if the answer was given to another request, or if a token in it was
        minted with a key the server no longer has (it can no longer be given again).
        """
        if answer[:_FINGERPRINT] != print_:
            raise RequestIdReused("this request_id was already used for a different request")
        response: ResponseT = self._type.FromString(answer[_FINGERPRINT:])
        for message, name in self._tokens(response):
            token = keys.remint(table_id, getattr(message, name))
            if token is None:
                raise RequestIdReused(
                    "this request was answered with a server key that has been retired; its answer cannot be "
                    "given again"
                )
            setattr(message, name, token)
        return response
