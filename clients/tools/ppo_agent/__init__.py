"""The published PPO agent for Big Two (Henry Charlesworth, henrycharlesworth/big2_PPOalgorithm,
trained parameters ``modelParameters136500``), ported to numpy as an outside opponent for
``bots_bench --against ppo`` (issue 36). Written from reading the agent's code, not copied:

* :mod:`.actions`: its 1695 actions (positions in the sorted hand) and which its game allows;
* :mod:`.state`: its 412-number input, built for one seat from the public history;
* :mod:`.network`: its weights read with numpy (no joblib, no TensorFlow) and the forward pass;
* :mod:`.player`: a :class:`~bigtwo.engine.bots.Bot` that plays it greedily, offered only the
  moves legal in both games;
* :mod:`.source`: where its files are fetched to (never shipped) and the ruleset it is met under;
* :mod:`.record`: records the original code's own answers (state and legal actions) for the
  tests, run against a fetched copy;
* :mod:`.bench`: ``bots_bench --against ppo``.

Importing this package needs nothing beyond the standard library; the player needs numpy.
"""
