"""What the tests share: Redis servers, referees, builds, certificates and the helpers of each area.

A test module imports from here (and from the project), never from another test module: a
``test_*.py`` file holds tests only, so running, moving or deleting one never changes another.
``tests/test_codebase.py`` keeps it so.
"""
