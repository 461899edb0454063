"""Each example bot acts on a refusal as the contract's facts say, and backs off as the shared policy says.

A bot's ``--print-reason-facts`` prints the decision its own code takes for every ErrorReason
(sent with the code its facts give) and for each status code the retry policy retries: "retry"
for the RETRYABLE category, "moved_on" for MOVED_ON (read the table again, decide again),
"fatal" for the rest; and the backoff numbers its retry loops use. Expected here: the same
decisions derived from the ``(dizhu.v1.facts)`` option of errors.proto as the referee reads it
(``dizhu.referee.errors.error_facts``) and the numbers of clients/python/dizhu/client/retry_policy.json.
A bot that types a reason set by hand, or its own backoff, disagrees as soon as the contract changes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dizhu.referee.errors import error_facts
from dizhu.v1 import errors_pb2
from tests.support.polyglot_builds import CLIENTS

RETRY_POLICY = CLIENTS / "python" / "dizhu" / "client" / "retry_policy.json"
_DECISIONS = {
    errors_pb2.ERROR_CATEGORY_RETRYABLE: "retry",
    errors_pb2.ERROR_CATEGORY_MOVED_ON: "moved_on",
}


def _seconds(text: str) -> float:
    assert text.endswith("s"), text
    return float(text[:-1])


def expected() -> dict[str, Any]:
    """The decisions and backoff a bot must print, from the descriptor and the policy file."""
    retry = json.loads(RETRY_POLICY.read_text())["methodConfig"][0]["retryPolicy"]
    decisions = {reason: _DECISIONS.get(facts.category, "fatal") for reason, facts in error_facts().items()}
    decisions.update(dict.fromkeys(retry["retryableStatusCodes"], "retry"))
    return {
        "decisions": decisions,
        "initial_backoff_ms": round(_seconds(retry["initialBackoff"]) * 1000),
        "max_backoff_ms": round(_seconds(retry["maxBackoff"]) * 1000),
        "backoff_multiplier": retry["backoffMultiplier"],
    }


@pytest.mark.parametrize("bot", ["go_bot", "java_bot", "cpp_bot", "rust_bot"])
def test_bot_decides_each_reason_as_the_facts_say(bot: str, request: pytest.FixtureRequest) -> None:
    command: list[str] = request.getfixturevalue(bot)
    result = subprocess.run(
        [*command, "--print-reason-facts"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected()


def test_go_module_copy_of_the_retry_policy_is_the_shared_one() -> None:
    """go:embed cannot reach outside clients/go: its copy of the policy must not drift."""
    copy = CLIENTS / "go" / "cmd" / "dizhu-bot" / "retry_policy.json"
    assert Path(copy).read_bytes() == RETRY_POLICY.read_bytes(), f"cp {RETRY_POLICY} {copy}"


#: The Node client's decisions, as its bot takes them (bot.mjs reads MOVED_ON_REASONS; dizhu.mjs's
#: call retries RETRYABLE_REASONS and the policy's codes).
_NODE_DECISIONS = """
const m = await import("./dizhu.mjs");
const decisions = {};
for (const reason of Object.keys(m.ERROR_FACTS)) {
  decisions[reason] = m.RETRYABLE_REASONS.has(reason) ? "retry" : m.MOVED_ON_REASONS.has(reason) ? "moved_on" : "fatal";
}
for (const code of m.RETRYABLE) decisions[m.codeName(code)] = "retry";
console.log(JSON.stringify(decisions));
"""


def test_node_client_decides_each_reason_as_the_facts_say(node_bot: list[str]) -> None:
    node, bot = node_bot
    result = subprocess.run(
        [node, "--input-type=module", "-e", _NODE_DECISIONS],
        cwd=Path(bot).parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected()["decisions"]
