// Sending one call: the deadline, the bearer token, the typed error, and the retry of a call that
// never reached the service. Every unary RPC is a pure function of its request and a move carries
// its index, so sending the same request again is safe (docs/CLIENT.md "Retries").
import type { Client, CallOptions } from "@connectrpc/connect";
import type { BigTwoService } from "../gen/bigtwo/v1/service_pb.js";
import { isRetryable, toBigTwoError } from "./errors.js";

/** A connect client of the service, over any transport (gRPC on Node, gRPC-web or Connect in a browser). */
export type BigTwoClient = Client<typeof BigTwoService>;

/** How often and how patiently an UNAVAILABLE or CANCELLED call is sent again. */
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
}

export function callOptions(settings: CallSettings): CallOptions {
  const options: CallOptions = {};
  if (settings.timeoutMs !== undefined) {
    options.timeoutMs = settings.timeoutMs;
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

/** Send a call, retrying UNAVAILABLE and CANCELLED with backoff and jitter; throws a BigTwoError. */
export async function send<T>(settings: CallSettings, call: (options: CallOptions) => Promise<T>): Promise<T> {
  const policy = settings.retry ?? DEFAULT_RETRY;
  let backoff = policy.initialBackoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(callOptions(settings));
    } catch (thrown) {
      const error = toBigTwoError(thrown);
      if (!isRetryable(error) || attempt >= policy.attempts || settings.signal?.aborted) {
        throw error;
      }
      await pause(backoff * (0.5 + Math.random()), settings.signal);
      backoff = Math.min(backoff * policy.multiplier, policy.maxBackoffMs);
    }
  }
}
