// The table host library: transport-agnostic (a connect Client of BigTwoService over any
// transport), so the browser table and the Node client share it.
export { botSeat, turnSeed, type BotSeat } from "./bots.js";
export { DEFAULT_RETRY, send, type BigTwoClient, type CallSettings, type RetryPolicy } from "./calls.js";
export {
  BigTwoError,
  DeadlineExceededError,
  FailedPreconditionError,
  InvalidArgumentError,
  PermissionDeniedError,
  ProtocolError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  isRetryable,
  toBigTwoError,
  type Violation,
} from "./errors.js";
export type { MoveResult, Refusal, SentMove } from "./moves.js";
export { BadRequestSchema, ErrorInfoSchema, type BadRequest, type ErrorInfo } from "./rpc_details.js";
export { PlayStreamSession, type StreamOpenOptions } from "./stream.js";
export {
  TableHost,
  type DealSettlement,
  type DealStart,
  type Hint,
  type Readout,
  type RulesetInit,
  type SavedTable,
  type TableOptions,
} from "./table_host.js";
