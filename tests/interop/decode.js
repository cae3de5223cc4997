'use strict';
// Reads answers of the Big Two service as a stock Node.js gRPC client does: @grpc/proto-loader loads
// proto/ at run time and each method's responseDeserialize (protobufjs, as proto-loader resolves it)
// decodes the bytes, with the options docs/API.md gives. None of the project's code is used.
//
// stdin:  {"proto_root": "<dir>", "items": [{"method": "ApplyMove", "data": "<base64>"},
//                                           {"status": "<base64 of grpc-status-details-bin>"}, ...]}
// stdout: one JSON value per item, in order: the decoded object (bytes as base64), or {"error": "..."}.
// One process decodes a whole corpus, so the suite pays node's start-up once.

const fs = require('fs');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const OPTIONS = {keepCase: true, longs: String, enums: String, defaults: true, oneofs: true};

// google.rpc.Status and the two details the service sends, declared here instead of loading the
// googleapis protos: the field numbers are all a decoder needs (docs/API.md, "Errors").
const STATUS_PROTO = `
syntax = "proto3";
package rpc;
message Any { string type_url = 1; bytes value = 2; }
message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
message BadRequest {
  message FieldViolation { string field = 1; string description = 2; }
  repeated FieldViolation field_violations = 1;
}
`;
const statusRoot = protobuf.parse(STATUS_PROTO, {keepCase: true}).root;
const DETAILS = {
  'type.googleapis.com/google.rpc.ErrorInfo': statusRoot.lookupType('rpc.ErrorInfo'),
  'type.googleapis.com/google.rpc.BadRequest': statusRoot.lookupType('rpc.BadRequest'),
};

function statusDetails(bytes) {
  const Status = statusRoot.lookupType('rpc.Status');
  const status = Status.toObject(Status.decode(bytes), OPTIONS);
  status.details = status.details.map((any) => {
    const type = DETAILS[any.type_url];
    return type ? {type_url: any.type_url, ...type.toObject(type.decode(any.value), OPTIONS)} : any;
  });
  return status;
}

function plain(value) {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [key, item] of Object.entries(value)) out[key] = plain(item);
    return out;
  }
  return value;
}

const request = JSON.parse(fs.readFileSync(0, 'utf8'));
const definition = protoLoader.loadSync('bigtwo/v1/service.proto', {...OPTIONS, includeDirs: [request.proto_root]});
const service = definition['bigtwo.v1.BigTwoService'];
const out = request.items.map((item) => {
  try {
    const bytes = Buffer.from(item.status !== undefined ? item.status : item.data, 'base64');
    return plain(item.status !== undefined ? statusDetails(bytes) : service[item.method].responseDeserialize(bytes));
  } catch (error) {
    return {error: String(error)};
  }
});
process.stdout.write(JSON.stringify(out));
