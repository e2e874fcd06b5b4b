#!/usr/bin/env python3
"""A client of accordd in another language, knowing nothing of accord.proto up front.

Usage: python_client.py unix:/path/to/accord.sock

1. Lists the services through gRPC server reflection (grpc.reflection.v1alpha); they
   must include accord.v1.Accord and the reflection service itself.
2. Fetches the file descriptors of accord.v1.Accord through reflection, builds the
   ListDevices request and response types from them (descriptor_pool +
   message_factory) and calls /accord.v1.Accord/ListDevices: the host device must be
   listed first.
3. Calls GetSessionInfo, a session method, without a session token: the daemon must
   answer UNAUTHENTICATED.
4. Asks the standard health service (grpc.health.v1.Health/Check, service ""): it
   must be SERVING.

Needs only python3-grpcio and python3-protobuf (Debian): the reflection and health
message types are declared here with descriptor_pb2, since Debian ships neither
grpcio-reflection nor grpcio-health-checking. Prints what it finds; exit 0 on success,
1 on a failed check.
"""

import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

TIMEOUT_S = 10

F = descriptor_pb2.FieldDescriptorProto


def message_class(pool, full_name):
    descriptor = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def add_message(file_proto, name, fields):
    """fields: (name, number, type, label, type_name or None)."""
    message = file_proto.message_type.add(name=name)
    for field_name, number, field_type, label, type_name in fields:
        field = message.field.add(name=field_name, number=number, type=field_type, label=label)
        if type_name:
            field.type_name = type_name
    return message


def builtin_pool():
    """The messages of grpc/reflection/v1alpha/reflection.proto and grpc/health/v1/health.proto
    that this client uses, wire-compatible (oneof members are plain optional fields on the wire)."""
    pool = descriptor_pool.DescriptorPool()
    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    string, bytes_, int32, message, enum = F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_INT32, F.TYPE_MESSAGE, F.TYPE_ENUM

    r = descriptor_pb2.FileDescriptorProto(name="accord_test/reflection.proto", package="grpc.reflection.v1alpha",
                                           syntax="proto3")
    add_message(r, "ServerReflectionRequest", [
        ("host", 1, string, opt, None),
        ("file_by_filename", 3, string, opt, None),
        ("file_containing_symbol", 4, string, opt, None),
        ("list_services", 7, string, opt, None),
    ])
    add_message(r, "FileDescriptorResponse", [("file_descriptor_proto", 1, bytes_, rep, None)])
    add_message(r, "ServiceResponse", [("name", 1, string, opt, None)])
    add_message(r, "ListServiceResponse",
                [("service", 1, message, rep, ".grpc.reflection.v1alpha.ServiceResponse")])
    add_message(r, "ErrorResponse", [("error_code", 1, int32, opt, None), ("error_message", 2, string, opt, None)])
    add_message(r, "ServerReflectionResponse", [
        ("valid_host", 1, string, opt, None),
        ("original_request", 2, message, opt, ".grpc.reflection.v1alpha.ServerReflectionRequest"),
        ("file_descriptor_response", 4, message, opt, ".grpc.reflection.v1alpha.FileDescriptorResponse"),
        ("list_services_response", 6, message, opt, ".grpc.reflection.v1alpha.ListServiceResponse"),
        ("error_response", 7, message, opt, ".grpc.reflection.v1alpha.ErrorResponse"),
    ])
    pool.Add(r)

    h = descriptor_pb2.FileDescriptorProto(name="accord_test/health.proto", package="grpc.health.v1", syntax="proto3")
    add_message(h, "HealthCheckRequest", [("service", 1, string, opt, None)])
    response = add_message(h, "HealthCheckResponse",
                           [("status", 1, enum, opt, ".grpc.health.v1.HealthCheckResponse.ServingStatus")])
    status_enum = response.enum_type.add(name="ServingStatus")
    for name, number in (("UNKNOWN", 0), ("SERVING", 1), ("NOT_SERVING", 2), ("SERVICE_UNKNOWN", 3)):
        status_enum.value.add(name=name, number=number)
    pool.Add(h)
    return pool


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Reflection:
    def __init__(self, channel, pool):
        self.request_type = message_class(pool, "grpc.reflection.v1alpha.ServerReflectionRequest")
        self.response_type = message_class(pool, "grpc.reflection.v1alpha.ServerReflectionResponse")
        self.call = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=self.request_type.SerializeToString,
            response_deserializer=self.response_type.FromString)

    def ask(self, **fields):
        """One request on a fresh bidi stream; returns the one response."""
        responses = list(self.call(iter([self.request_type(**fields)]), timeout=TIMEOUT_S))
        check(len(responses) == 1, f"reflection answered {len(responses)} messages to one request")
        response = responses[0]
        if response.HasField("error_response"):
            raise Failure(f"reflection error {response.error_response.error_code}: "
                          f"{response.error_response.error_message}")
        return response


def load_files(serialized_files):
    """A pool holding the fetched files, each added after the files it imports."""
    files = {}
    for blob in serialized_files:
        proto = descriptor_pb2.FileDescriptorProto.FromString(blob)
        files[proto.name] = proto
    pool = descriptor_pool.DescriptorPool()
    added = set()

    def add(name):
        if name in added:
            return
        check(name in files, f"reflection did not send {name}, which another file imports")
        for dependency in files[name].dependency:
            add(dependency)
        pool.Add(files[name])
        added.add(name)

    for name in files:
        add(name)
    return pool


def main():
    if len(sys.argv) != 2 or not sys.argv[1].startswith("unix:"):
        print("usage: python_client.py unix:/path/to/accord.sock", file=sys.stderr)
        return 2
    target = sys.argv[1]
    pool = builtin_pool()
    with grpc.insecure_channel(target) as channel:
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT_S)
        reflection = Reflection(channel, pool)

        # 1. The services, by reflection.
        listed = reflection.ask(list_services="*")
        services = sorted(s.name for s in listed.list_services_response.service)
        for name in services:
            print(f"service {name}")
        for wanted in ("accord.v1.Accord", "grpc.reflection.v1alpha.ServerReflection"):
            check(wanted in services, f"reflection does not list {wanted}: {services}")

        # 2. accord.v1.Accord's descriptors, then ListDevices with types built from them.
        files = reflection.ask(file_containing_symbol="accord.v1.Accord")
        accord_pool = load_files(files.file_descriptor_response.file_descriptor_proto)
        service = accord_pool.FindServiceByName("accord.v1.Accord")
        methods = {m.name: m for m in service.methods}
        print(f"accord.v1.Accord has {len(methods)} methods: {', '.join(sorted(methods))}")
        list_devices = methods.get("ListDevices")
        check(list_devices is not None, "accord.v1.Accord has no ListDevices method")
        request_type = message_class(accord_pool, list_devices.input_type.full_name)
        response_type = message_class(accord_pool, list_devices.output_type.full_name)
        call = channel.unary_unary(f"/{service.full_name}/{list_devices.name}",
                                   request_serializer=request_type.SerializeToString,
                                   response_deserializer=response_type.FromString)
        devices = call(request_type(), timeout=TIMEOUT_S)
        check(len(devices.devices) >= 1, "ListDevices returned no device")
        for device in devices.devices:
            print(f"device {device.index} kind {device.kind} name {device.name} target {device.target} "
                  f"lanes {len(device.lanes)}")
        check(devices.devices[0].kind == "host", f"device 0 is not the host: {devices.devices[0]}")

        # 3. A session method without the session token is refused.
        session_info = methods.get("GetSessionInfo")
        check(session_info is not None, "accord.v1.Accord has no GetSessionInfo method")
        info_call = channel.unary_unary(
            f"/{service.full_name}/{session_info.name}",
            request_serializer=message_class(accord_pool, session_info.input_type.full_name).SerializeToString,
            response_deserializer=message_class(accord_pool, session_info.output_type.full_name).FromString)
        try:
            info_call(message_class(accord_pool, session_info.input_type.full_name)(), timeout=TIMEOUT_S)
            raise Failure("GetSessionInfo without a session token succeeded")
        except grpc.RpcError as error:
            print(f"GetSessionInfo without a session: {error.code().name}: {error.details()}")
            check(error.code() == grpc.StatusCode.UNAUTHENTICATED,
                  f"GetSessionInfo without a token gave {error.code().name}, expected UNAUTHENTICATED")

        # 4. The standard health check.
        health_request = message_class(pool, "grpc.health.v1.HealthCheckRequest")
        health_response = message_class(pool, "grpc.health.v1.HealthCheckResponse")
        health = channel.unary_unary("/grpc.health.v1.Health/Check",
                                     request_serializer=health_request.SerializeToString,
                                     response_deserializer=health_response.FromString)
        answer = health(health_request(service=""), timeout=TIMEOUT_S)
        status_name = health_response.DESCRIPTOR.enum_types_by_name["ServingStatus"].values_by_number[
            answer.status].name
        print(f"health: {status_name}")
        check(status_name == "SERVING", f"health check says {status_name}, expected SERVING")
    print("OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"FAIL: {failure}")
        sys.exit(1)
    except grpc.RpcError as error:
        print(f"FAIL: RPC error {error.code().name}: {error.details()}")
        sys.exit(1)
    except grpc.FutureTimeoutError:
        print(f"FAIL: could not connect within {TIMEOUT_S} s")
        sys.exit(1)
