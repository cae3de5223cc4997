"""The list of RPCs read from the service descriptor (bigtwo.codec.rpcs), and the per-RPC tables
held to it: each names the RPC it lacks, and the tables in use lack none."""

from __future__ import annotations

import pytest
from bigtwo.codec import rpcs
from bigtwo.codec.rpcs import RPCS, RpcTableError, check_covers, check_known, snake_case
from bigtwo.service import costs, servicer
from bigtwo.service.core import Core
from bigtwo.v1 import service_pb2 as api


def test_the_list_is_the_descriptors_with_the_generated_classes() -> None:
    service = api.DESCRIPTOR.services_by_name["BigTwoService"]
    assert [rpc.name for rpc in RPCS] == [method.name for method in service.methods]
    for rpc, method in zip(RPCS, service.methods, strict=True):
        assert rpc.request is getattr(api, method.input_type.name), rpc.name
        assert rpc.response is getattr(api, method.output_type.name), rpc.name
        assert (rpc.client_streaming, rpc.server_streaming) == (method.client_streaming, method.server_streaming)
        assert rpc.path == f"/bigtwo.v1.BigTwoService/{method.name}"
    assert {rpc.name for rpc in rpcs.STREAM_RPCS} == {"PlayStream"}
    assert set(rpcs.UNARY_RPCS) | set(rpcs.STREAM_RPCS) == set(RPCS)


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("SettleMatch", "settle_match"),
        ("Deal", "deal"),
        ("ListBotLevels", "list_bot_levels"),
        ("GetV2Key", "get_v2_key"),
    ],
)
def test_method_names_are_the_rpc_names_in_snake_case(name: str, method: str) -> None:
    assert snake_case(name) == method


def test_a_table_short_of_an_rpc_names_it_and_the_table() -> None:
    names = [rpc.name for rpc in RPCS]
    with pytest.raises(RpcTableError, match=r"^the cost table: no entry for AuditLog \(the RPCs"):
        check_covers([name for name in names if name != "AuditLog"], "the cost table")
    with pytest.raises(
        RpcTableError, match=r"^the cost table: Nope named, which bigtwo\.v1\.BigTwoService does not have"
    ):
        check_covers([*names, "Nope"], "the cost table")
    with pytest.raises(RpcTableError, match=r"^NOT_OFFERED: Nope named"):
        check_known(["Deal", "Nope"], "NOT_OFFERED")
    check_covers(names, "the whole list")


def test_the_server_hosts_every_rpc_with_a_handler_and_a_place() -> None:
    assert set(servicer.UNARY) == {rpc.name for rpc in rpcs.UNARY_RPCS}
    for name, (request, response, attr) in servicer.UNARY.items():
        assert callable(getattr(Core, attr)), name
        assert request is rpcs.BY_NAME[name].request and response is rpcs.BY_NAME[name].response
    assert servicer.UNARY["ApplyMove"][2] == "apply_move_answer" and servicer.UNARY["Deal"][2] == "deal"
    assert set(costs.BOUNDED) | costs.ALWAYS_ON_THE_LOOP == set(servicer.UNARY)
    assert not costs.ALWAYS_ON_THE_LOOP & set(costs.BOUNDED)
