"""Training the ``learned`` bot level (issue 36): Deep Monte Carlo self-play (:mod:`.train`), the
torch network (:mod:`.model`) and the command (``python -m bigtwo.tools.learn``). Needs the
``train`` extra (torch, numpy); run from a checkout, never shipped in the wheel."""
