// Sending one call: the deadline, the bearer token, the typed error, and the retry of a call that
// never reached the service or that it refused for load (a shed). Every unary RPC is a pure
// function of its request and a move carries its index, so sending the same request again is safe
// (docs/CLIENT.md "Retries"). Every transport (src/node/grpc.ts, the table's src/table/transport.ts)
// sends through here.
import type { Client, CallOptions } from "@connectrpc/connect";
import type { BigTwoService } from "../gen/bigtwo/v1/service_pb.js";
import { isRetryable, toBigTwoError, type BigTwoError } from "./errors.js";

/** A connect client of the service, over any transport (gRPC on Node, gRPC-web or Connect in a browser). */
export type BigTwoClient = Client<typeof BigTwoService>;

/** How often and how patiently an UNAVAILABLE, CANCELLED or shed call is sent again. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, initialBackoffMs: 100, maxBackoffMs: 2000, multiplier: 2 };

/** What every call of a table host is sent with. */
export interface CallSettings {
  /** Per call (a whole stream for PlayStream); the service's default when unset. */
  readonly timeoutMs?: number;
  /** The service's bearer token (`--auth-token`), sent as `authorization: Bearer …`. */
  readonly bearerToken?: string;
  readonly retry?: RetryPolicy;
  /** Cancels every call in flight (a closed page, a left table). */
  readonly signal?: AbortSignal;
  /** Told of each retry before its wait (the error, the wait in ms): a status line, a counter. */
  readonly onRetry?: (error: BigTwoError, waitMs: number) => void;
}

export function callOptions(settings: CallSettings, timeoutMs = settings.timeoutMs): CallOptions {
  const options: CallOptions = {};
  if (timeoutMs !== undefined) {
    options.timeoutMs = timeoutMs;
  }
  if (settings.bearerToken !== undefined) {
    options.headers = { authorization: `Bearer ${settings.bearerToken}` };
  }
  if (settings.signal !== undefined) {
    options.signal = settings.signal;
  }
  return options;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Send a call; throws a BigTwoError. UNAVAILABLE and CANCELLED are retried with backoff and
 * jitter, each attempt with a whole `timeoutMs` (another connection, as before). A shed
 * (RESOURCE_EXHAUSTED with a RetryInfo) is retried never sooner than its delay (spread over 1-1.5x
 * it), and only while the call's deadline leaves room: the retry gets what is left of it. */
export async function send<T>(settings: CallSettings, call: (options: CallOptions) => Promise<T>): Promise<T> {
  const policy = settings.retry ?? DEFAULT_RETRY;
  let backoff = policy.initialBackoffMs;
  let deadlineAt = settings.timeoutMs === undefined ? undefined : Date.now() + settings.timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const left = deadlineAt === undefined ? undefined : Math.max(1, deadlineAt - Date.now());
      return await call(callOptions(settings, left));
    } catch (thrown) {
      const error = toBigTwoError(thrown);
      if (!isRetryable(error) || attempt >= policy.attempts || settings.signal?.aborted) {
        throw error;
      }
      let wait = backoff * (0.5 + Math.random());
      if (error.retryDelayMs !== undefined) {
        wait = Math.max(wait, error.retryDelayMs * (1 + 0.5 * Math.random()));
        if (deadlineAt !== undefined && Date.now() + wait >= deadlineAt) {
          throw error; // the shed's retry would end after the call's deadline
        }
      } else if (settings.timeoutMs !== undefined) {
        deadlineAt = Date.now() + wait + settings.timeoutMs;
      }
      settings.onRetry?.(error, wait);
      await pause(wait, settings.signal);
      backoff = Math.min(backoff * policy.multiplier, policy.maxBackoffMs);
    }
  }
}
