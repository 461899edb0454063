"""Training environments on the referee's exact rules (docs/env.md).

* ``dizhu.env.dou_dizhu_v0``: the PettingZoo environments (``env``, ``raw_env``, ``parallel_env``),
  3p and 4p with the auction;
* ``DouDizhuEnv``: a Gymnasium environment for one seat, the others played by policies or the
  bundled bots (``BotOpponent``);
* ``VectorDouDizhuEnv``: a Gymnasium ``VectorEnv`` of many tables stepped in one call into
  preallocated buffers, with ``send`` / ``recv``;
* ``action_table``: the published action tables; ``encoding``: the observation encodings;
* ``PolicyBot``: an environment policy playing at a real referee as a ``dizhu.client.Bot``.

Needs the ``[env]`` extra: ``pip install 'dizhu[env]'``.
"""

import gymnasium

from dizhu.env.actions import ACTION_TABLE_VERSION, FIRST_PLAY, PASS, ActionTable, action_table
from dizhu.env.encodings import ENCODINGS, Encoding, card_matrix, douzero_features, encoding
from dizhu.env.engine import available_engines, rules
from dizhu.env.info import Seen, from_state
from dizhu.env.opponents import BotOpponent
from dizhu.env.rewards import REWARDS, rewards
from dizhu.env.single import DouDizhuEnv, Opponent, Policy, random_policy
from dizhu.env.vector import VectorDouDizhuEnv

#: The Gymnasium id of ``DouDizhuEnv``: ``gymnasium.make("dizhu.env:dizhu/DouDizhu-v0", variant="4p")``
#: (Gymnasium 1.x loads no plugins: the ``module:`` prefix imports this module, which registers it).
GYMNASIUM_ID = "dizhu/DouDizhu-v0"
if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(GYMNASIUM_ID, entry_point="dizhu.env.single:DouDizhuEnv")

__all__ = [
    "ACTION_TABLE_VERSION",
    "ENCODINGS",
    "FIRST_PLAY",
    "GYMNASIUM_ID",
    "PASS",
    "REWARDS",
    "ActionTable",
    "BotOpponent",
    "DouDizhuEnv",
    "Encoding",
    "Opponent",
    "Policy",
    "Seen",
    "VectorDouDizhuEnv",
    "action_table",
    "available_engines",
    "card_matrix",
    "douzero_features",
    "encoding",
    "from_state",
    "random_policy",
    "rewards",
    "rules",
]
