// The Node transport: native gRPC over HTTP/2 (cleartext, prior knowledge), the protocol the
// service speaks; it carries PlayStream's bidirectional stream too. Calls over it go through
// send() (host/calls.ts), which retries UNAVAILABLE and sheds (RESOURCE_EXHAUSTED with a
// RetryInfo) within the call's deadline.
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BigTwoService } from "../gen/bigtwo/v1/service_pb.js";
import type { BigTwoClient } from "../host/calls.js";

/** A gRPC transport to `http://host:port` (a port alone means 127.0.0.1). */
export function grpcTransport(target: string | number): Transport {
  const address = typeof target === "number" || /^\d+$/.test(target) ? `127.0.0.1:${target}` : target;
  const baseUrl = /^https?:\/\//.test(address) ? address : `http://${address}`;
  // connect-node's gRPC transport is HTTP/2 only (it takes no httpVersion option, unlike
  // createConnectTransport), over cleartext with prior knowledge for http:// URLs.
  return createGrpcTransport({ baseUrl });
}

/** A BigTwoService client over a fresh gRPC transport (its own HTTP/2 connection). */
export function grpcClient(target: string | number): BigTwoClient {
  return createClient(BigTwoService, grpcTransport(target));
}
