"""Tools that measure or judge a running service from outside: the service bench, the load generator,
the vectors judge, the stall, replay, hostile-input and bot benches, the bot tournament. They speak the
proto (generated stubs) and the engine, never the client library, and live outside the server package
so the server does not carry them."""
