"""Health checking (grpc.health.v1) and server reflection, as operators and tools use them."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from dizhu.process import Referee
from dizhu.v1 import table_service_pb2

SERVING = health_pb2.HealthCheckResponse.SERVING


async def _reflect(
    channel: grpc.aio.Channel, request: reflection_pb2.ServerReflectionRequest
) -> reflection_pb2.ServerReflectionResponse:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo(iter([request]))
    responses = [response async for response in call]
    assert len(responses) == 1
    return responses[0]


class TestHealth:
    async def test_the_server_and_both_services_are_serving(self, health: health_pb2_grpc.HealthStub) -> None:
        for service in ("", "dizhu.v1.TableService", "dizhu.v1.RulesService"):
            response = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert response.status == SERVING, service

    async def test_an_unknown_service_is_not_found(self, health: health_pb2_grpc.HealthStub) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await health.Check(health_pb2.HealthCheckRequest(service="dizhu.v1.Nope"))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND

    async def test_a_stopping_server_reports_not_serving_first(
        self, in_process_referee: Referee, health: health_pb2_grpc.HealthStub
    ) -> None:
        await in_process_referee.health.enter_graceful_shutdown()
        for service in ("", "dizhu.v1.TableService"):
            response = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert response.status == health_pb2.HealthCheckResponse.NOT_SERVING


class TestReflection:
    async def test_the_services_are_listed(self, channel: grpc.aio.Channel) -> None:
        response = await _reflect(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
        names = {service.name for service in response.list_services_response.service}
        assert {"dizhu.v1.TableService", "dizhu.v1.RulesService", "grpc.health.v1.Health"} <= names

    async def test_a_service_resolves_to_its_file_with_every_method(self, channel: grpc.aio.Channel) -> None:
        response = await _reflect(
            channel, reflection_pb2.ServerReflectionRequest(file_containing_symbol="dizhu.v1.TableService")
        )
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in response.file_descriptor_response.file_descriptor_proto
        ]
        service = next(s for f in files if f.package == "dizhu.v1" for s in f.service if s.name == "TableService")
        expected = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].methods
        assert [m.name for m in service.method] == [m.name for m in expected]
        assert {"CreateTable", "JoinTable", "GetTable", "LeaveTable", "CloseTable", "Bid", "Play", "Settle"} <= {
            m.name for m in service.method
        }
