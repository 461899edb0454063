"""The referee for browsers: gRPC-Web and Connect from the same servicers, the reference web table.

Needs the ``web`` extra (``pip install 'dizhu[web]'``). ``dizhu serve --http-address
host:port`` starts it beside the gRPC server, in the same process; see docs/front-ends.md.
"""

from dizhu.web.connections import ConnectionLimits
from dizhu.web.server import WebServer, start_web_server

__all__ = ["ConnectionLimits", "WebServer", "start_web_server"]
