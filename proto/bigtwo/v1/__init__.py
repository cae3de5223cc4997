"""Generated protobuf/gRPC modules for the ``bigtwo.v1`` API."""
