"""A referee process's settings: what it serves, where, with which limits (docs/security.md).

One frozen :class:`ServerConfig`, read by the composition root (:mod:`dizhu.process`) and the
gRPC side: the settings of every group, each declared once in its group's module
(:mod:`dizhu.config.declaration` says how). :mod:`dizhu.config.flags` fills it from
command-line flags and the environment; docs/operations.md's table is written from it
(:mod:`dizhu.config.docs_table`).
"""

from __future__ import annotations

import dataclasses

from dizhu.config.browser_settings import BrowserSettings
from dizhu.config.declaration import SettingsGroup
from dizhu.config.process_settings import REDIS_URL_EXPECTED, ProcessSettings, is_redis_url, listens_on_loopback
from dizhu.config.safety_settings import MIN_SECRET_CHARS, SafetySettings
from dizhu.config.scale_out_settings import ScaleOutSettings
from dizhu.config.tls_settings import TlsSettings

__all__ = ["GROUPS", "MIN_SECRET_CHARS", "REDIS_URL_EXPECTED", "ServerConfig", "is_redis_url", "listens_on_loopback"]

#: The groups of settings, in the order ``--help`` and the docs list them.
GROUPS: tuple[type[SettingsGroup], ...] = (
    ProcessSettings,
    SafetySettings,
    TlsSettings,
    BrowserSettings,
    ScaleOutSettings,
)


# The bases in reverse order of GROUPS: a dataclass's fields come from its last base first.
@dataclasses.dataclass(frozen=True)
class ServerConfig(ScaleOutSettings, BrowserSettings, TlsSettings, SafetySettings, ProcessSettings):
    """Every setting of a referee process; each is a keyword, with its declared default."""

    @property
    def store_replicas(self) -> int:
        """How many replicas must hold a change before it is acknowledged (``durability``)."""
        return 1 if self.durability == "replica" else 0

    @property
    def limits_enabled(self) -> bool:
        """Whether the per-client limits apply (see ``limits``)."""
        return self.limits == "on" or (self.limits == "auto" and not listens_on_loopback(self.address))

    @property
    def anonymous_create(self) -> bool:
        """Whether CreateTable needs no API key (when the server has none configured)."""
        return self.allow_anonymous_create or listens_on_loopback(self.address)
