// Failed calls as typed errors. A rule refusal is not one of them: it is a normal answer
// (MoveOutcome.refusal, see Refusal in moves.ts). These carry what the service sends with a
// failed call: the gRPC code, the sentence, and the google.rpc details (ErrorInfo reason and
// metadata, BadRequest field violations, RetryInfo's delay for a call refused for load).
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "./rpc_details.js";

/** One field of a malformed request (google.rpc.BadRequest) and what is wrong with it. */
export interface Violation {
  readonly field: string;
  readonly description: string;
}

/** Any failed call. `reason` is the ErrorInfo reason ("" when the service sent none). */
export class BigTwoError extends Error {
  override name = "BigTwoError";
  constructor(
    readonly code: Code,
    /** The service's sentence, without the status prefix. */
    readonly sentence: string,
    readonly reason: string = "",
    readonly metadata: Readonly<Record<string, string>> = {},
    readonly violations: readonly Violation[] = [],
    options?: { cause?: unknown },
    /** Milliseconds, from the status's google.rpc.RetryInfo: the service refused the call for
     * load (a shed) and says when to send it again; undefined for any other failure. */
    readonly retryDelayMs?: number,
  ) {
    super(`${Code[code] ?? code}${reason ? ` ${reason}` : ""}: ${sentence}`, options);
  }

  /** Whether the call was refused for load, not for what it asked: worth sending again after
   * retryDelayMs (send() does, within the call's deadline). */
  get shed(): boolean {
    return this.retryDelayMs !== undefined;
  }

  /** The gRPC code's name, e.g. "FailedPrecondition". */
  get codeName(): string {
    return Code[this.code] ?? String(this.code);
  }
}

/** INVALID_ARGUMENT: a malformed request, or a tampered or foreign state token (TOKEN_*). */
export class InvalidArgumentError extends BigTwoError {
  override name = "InvalidArgumentError";
}

/** FAILED_PRECONDITION: a move index that does not fit (MOVE_ALREADY_MADE, WRONG_MOVE_INDEX), DEAL_OVER... */
export class FailedPreconditionError extends BigTwoError {
  override name = "FailedPreconditionError";
}

/** PERMISSION_DENIED: a seat token used for another seat (TOKEN_BOUND_TO_SEAT). */
export class PermissionDeniedError extends BigTwoError {
  override name = "PermissionDeniedError";
}

/** UNAUTHENTICATED: a missing or wrong bearer token. */
export class UnauthenticatedError extends BigTwoError {
  override name = "UnauthenticatedError";
}

/** RESOURCE_EXHAUSTED: a request over the service's limits (LOG_TOO_LONG...: never retried), or
 * one refused for load (`shed`, HEAVY_CALLS_BUSY...: retried within the call's deadline). */
export class ResourceExhaustedError extends BigTwoError {
  override name = "ResourceExhaustedError";
}

/** UNAVAILABLE or CANCELLED after every retry: the service could not be reached. */
export class UnavailableError extends BigTwoError {
  override name = "UnavailableError";
}

/** DEADLINE_EXCEEDED. */
export class DeadlineExceededError extends BigTwoError {
  override name = "DeadlineExceededError";
}

/** The service answered something this client cannot use (a missing field, an answer out of order). */
export class ProtocolError extends BigTwoError {
  override name = "ProtocolError";
  constructor(sentence: string) {
    super(Code.Internal, sentence);
  }
}

const classes: Partial<Record<Code, typeof BigTwoError>> = {
  [Code.InvalidArgument]: InvalidArgumentError,
  [Code.FailedPrecondition]: FailedPreconditionError,
  [Code.PermissionDenied]: PermissionDeniedError,
  [Code.Unauthenticated]: UnauthenticatedError,
  [Code.ResourceExhausted]: ResourceExhaustedError,
  [Code.Unavailable]: UnavailableError,
  [Code.Canceled]: UnavailableError,
  [Code.DeadlineExceeded]: DeadlineExceededError,
};

/** The typed error for anything a call threw (a BigTwoError is returned as it is). */
export function toBigTwoError(thrown: unknown): BigTwoError {
  if (thrown instanceof BigTwoError) {
    return thrown;
  }
  const error = ConnectError.from(thrown);
  const info = error.findDetails(ErrorInfoSchema)[0];
  const violations = error
    .findDetails(BadRequestSchema)
    .flatMap((request) => request.fieldViolations.map(({ field, description }) => ({ field, description })));
  const delay = error.findDetails(RetryInfoSchema)[0]?.retryDelay;
  const retryDelayMs =
    delay === undefined ? undefined : Math.max(0, Number(delay.seconds) * 1000 + Math.floor(delay.nanos / 1e6));
  const Class = classes[error.code] ?? BigTwoError;
  return new Class(
    error.code,
    error.rawMessage,
    info?.reason ?? "",
    { ...info?.metadata },
    violations,
    { cause: thrown },
    retryDelayMs,
  );
}

/** Whether a call may be sent again after `error`: it never reached a handler, the connection
 * broke, or the service refused it for load (RESOURCE_EXHAUSTED with a RetryInfo). A
 * RESOURCE_EXHAUSTED without one is a request over a limit: the same answer again. */
export function isRetryable(error: BigTwoError): boolean {
  return error.code === Code.Unavailable || error.code === Code.Canceled || (error.code === Code.ResourceExhausted && error.shed);
}
