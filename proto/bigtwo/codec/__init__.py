"""The one translation between protobuf messages (:mod:`bigtwo.v1`) and engine values, used by the
service, the client, the replay tools and the vectors judge. No transport: it converts values only.

One module per concern: :mod:`.rulesets`, :mod:`.cards`, :mod:`.plays` (plays, kinds, refusals),
:mod:`.contexts` (seats, deal contexts), :mod:`.events`, :mod:`.audits` (audit verdicts),
:mod:`.replay` (replay logs). A field that holds no valid value raises
:class:`~bigtwo.codec.errors.CodecFieldError`, naming the field."""
