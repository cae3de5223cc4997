"""An outside fuzzer for the Big Two service.

It knows the service only as ``proto/bigtwo/v1`` describes it: the generated ``bigtwo.v1`` messages,
``grpc`` and ``google.protobuf``. It never imports ``bigtwo.service``, ``bigtwo.engine`` or
``bigtwo.client``, so it attacks the API the way a stranger's client would, and what it finds is
what such a client could do. ``fuzz_service.py`` is the runner (``make fuzz``); ``server.py`` starts
and watches the server under test; ``corpus.py`` learns valid requests from real answers;
``mutate.py`` and ``hostile.py`` turn them into bad ones.
"""
