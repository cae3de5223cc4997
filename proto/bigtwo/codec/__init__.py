"""The one translation between protobuf messages (:mod:`bigtwo.v1`) and engine values, used by the
service, the client, the replay tools and the vectors judge. No transport: it converts values only."""
