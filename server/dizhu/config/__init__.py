"""Server configuration: the settings (:mod:`dizhu.config.settings`), each declared once in its
group's module (:mod:`dizhu.config.declaration`), and the flags that fill them
(:mod:`dizhu.config.flags`), every flag with an environment variable as its default."""

from dizhu.config.flags import add_server_arguments, config_from_args
from dizhu.config.settings import MIN_SECRET_CHARS, ServerConfig, listens_on_loopback

__all__ = ["MIN_SECRET_CHARS", "ServerConfig", "add_server_arguments", "config_from_args", "listens_on_loopback"]
