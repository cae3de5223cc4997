"""``bigtwo loadtest``: real deals against one or more replicas (docs/DEPLOY.md "Load testing").

* :mod:`.generator`: asyncio + grpc.aio games (stream or unary), several channels per target.
* :mod:`.report`: the final table, JSON and the percentiles.
* :mod:`.plot`: the PNG latency plot (matplotlib Agg).
* :mod:`.command`: the argparse subcommand (heavy imports stay inside its handler).
"""
