"""``dizhu play``: a person's seat at a table in the terminal, against bundled bots.

The hand sorted and numbered, the legal plays listed, cards typed in the project's
notation, refusals stated with the referee's reason, the turn clock shown at each prompt,
every move narrated. See :mod:`dizhu.play.session` for the loop, :mod:`dizhu.play.commands`
for what can be typed.
"""

from dizhu.play.session import PlayOptions, play, stdin_lines

__all__ = ["PlayOptions", "play", "stdin_lines"]
