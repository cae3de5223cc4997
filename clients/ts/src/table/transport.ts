// The page's connection to the service that served it: Connect by default (JSON, or binary with
// ?format=binary); ?protocol=grpc-web speaks gRPC-Web (binary, or JSON with ?format=json). The
// page sends every call through send() (host/calls.ts): a call the service refused for load (a
// shed: the Connect error's google.rpc.RetryInfo) is retried after its delay, within the call's
// deadline, as UNAVAILABLE is.
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { BigTwoService } from "../gen/bigtwo/v1/service_pb.js";
import type { BigTwoClient } from "../host/calls.js";

export interface Connection {
  readonly client: BigTwoClient;
  /** "Connect JSON", "gRPC-Web binary"...: shown in the page's footer. */
  readonly label: string;
}

export function connect(baseUrl: string, query: URLSearchParams): Connection {
  const grpcWeb = query.get("protocol") === "grpc-web";
  const format = query.get("format");
  const binary = format === null ? grpcWeb : format === "binary";
  const transport: Transport = grpcWeb
    ? createGrpcWebTransport({ baseUrl, useBinaryFormat: binary })
    : createConnectTransport({ baseUrl, useBinaryFormat: binary });
  return {
    client: createClient(BigTwoService, transport),
    label: `${grpcWeb ? "gRPC-Web" : "Connect"} ${binary ? "binary" : "JSON"}`,
  };
}
