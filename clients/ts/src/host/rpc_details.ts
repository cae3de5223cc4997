// The google.rpc error details the service sends (google/rpc/error_details.proto), described
// here by hand: googleapis is not among the project's protos and @bufbuild/protobuf's wkt has no
// google.rpc types. Only the fields the service fills are declared; unknown fields are skipped
// when decoding, so the full messages decode fine.
import { create, createFileRegistry, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";

/** google.rpc.ErrorInfo: why a call failed, as a stable upper-snake reason. */
export type ErrorInfo = Message<"google.rpc.ErrorInfo"> & {
  reason: string;
  domain: string;
  metadata: { [key: string]: string };
};

/** google.rpc.BadRequest.FieldViolation: one field of the request and what is wrong with it. */
export type FieldViolation = Message<"google.rpc.BadRequest.FieldViolation"> & {
  field: string;
  description: string;
};

/** google.rpc.BadRequest: the fields of a malformed request. */
export type BadRequest = Message<"google.rpc.BadRequest"> & {
  fieldViolations: FieldViolation[];
};

/** google.protobuf.Duration, as RetryInfo carries it. */
export type RetryDelay = Message<"google.rpc.RetryInfo.Delay"> & {
  seconds: bigint;
  nanos: number;
};

/** google.rpc.RetryInfo: the call was refused for load (a shed); send it again after retryDelay. */
export type RetryInfo = Message<"google.rpc.RetryInfo"> & {
  retryDelay?: RetryDelay;
};

const text = (name: string, number: number) => ({ name, number, type: Type.STRING, label: Label.OPTIONAL });

const errorDetailsFile = create(FileDescriptorProtoSchema, {
  name: "google/rpc/error_details.proto",
  package: "google.rpc",
  syntax: "proto3",
  messageType: [
    {
      name: "ErrorInfo",
      field: [
        text("reason", 1),
        text("domain", 2),
        {
          name: "metadata",
          number: 3,
          type: Type.MESSAGE,
          label: Label.REPEATED,
          typeName: ".google.rpc.ErrorInfo.MetadataEntry",
        },
      ],
      nestedType: [{ name: "MetadataEntry", field: [text("key", 1), text("value", 2)], options: { mapEntry: true } }],
    },
    {
      name: "BadRequest",
      field: [
        {
          name: "field_violations",
          number: 1,
          type: Type.MESSAGE,
          label: Label.REPEATED,
          typeName: ".google.rpc.BadRequest.FieldViolation",
        },
      ],
      nestedType: [{ name: "FieldViolation", field: [text("field", 1), text("description", 2)] }],
    },
    {
      // retry_delay is a google.protobuf.Duration; described here by its two fields (same wire
      // format), so that this file needs no import.
      name: "RetryInfo",
      field: [
        {
          name: "retry_delay",
          number: 1,
          type: Type.MESSAGE,
          label: Label.OPTIONAL,
          typeName: ".google.rpc.RetryInfo.Delay",
        },
      ],
      nestedType: [
        {
          name: "Delay",
          field: [
            { name: "seconds", number: 1, type: Type.INT64, label: Label.OPTIONAL },
            { name: "nanos", number: 2, type: Type.INT32, label: Label.OPTIONAL },
          ],
        },
      ],
    },
  ],
});

const registry = createFileRegistry(errorDetailsFile, () => undefined);

function schema<T extends Message>(typeName: string): GenMessage<T> {
  const desc = registry.getMessage(typeName);
  if (desc === undefined) {
    throw new Error(`${typeName} is missing from the hand-written google.rpc descriptor`);
  }
  return desc as GenMessage<T>;
}

export const ErrorInfoSchema: GenMessage<ErrorInfo> = schema<ErrorInfo>("google.rpc.ErrorInfo");
export const BadRequestSchema: GenMessage<BadRequest> = schema<BadRequest>("google.rpc.BadRequest");
export const RetryInfoSchema: GenMessage<RetryInfo> = schema<RetryInfo>("google.rpc.RetryInfo");
