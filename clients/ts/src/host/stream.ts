// One PlayStream: open a deal (from a state token), then one move at a time, each answered before
// the next is sent. Bidirectional streams need a transport that carries them: connect-node's gRPC
// over HTTP/2 does; fetch-based browser transports do not (a browser host uses unary calls).
import { create } from "@bufbuild/protobuf";
import {
  PlayStreamRequestSchema,
  type PlayStreamRequest,
  type PlayStreamResponse,
  type StreamMoveResult,
  type StreamOpened,
} from "../gen/bigtwo/v1/service_pb.js";
import { callOptions, type BigTwoClient, type CallSettings } from "./calls.js";
import { ProtocolError, toBigTwoError } from "./errors.js";
import type { SentMove } from "./moves.js";

/** The requests of a stream, pushed one by one and read by the transport as an async iterable. */
class RequestQueue implements AsyncIterable<PlayStreamRequest> {
  private readonly items: PlayStreamRequest[] = [];
  private waiting: ((result: IteratorResult<PlayStreamRequest>) => void) | undefined;
  private ended = false;

  push(request: PlayStreamRequest): void {
    if (this.ended) {
      throw new ProtocolError("the stream is closed");
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) {
      waiting({ value: request, done: false });
    } else {
      this.items.push(request);
    }
  }

  end(): void {
    this.ended = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  private take(): Promise<IteratorResult<PlayStreamRequest>> {
    const item = this.items.shift();
    if (item !== undefined) {
      return Promise.resolve({ value: item, done: false });
    }
    if (this.ended) {
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  // An async generator, not a bare iterator: connect calls return() and throw() on the
  // iterable it is given when the stream ends.
  async *[Symbol.asyncIterator](): AsyncGenerator<PlayStreamRequest> {
    for (;;) {
      const next = await this.take();
      if (next.done) {
        return;
      }
      yield next.value;
    }
  }
}

/** How a stream is opened: from a state token, for a seat's view, with a token after every move. */
export interface StreamOpenOptions {
  readonly stateToken: Uint8Array;
  readonly viewSeat?: number;
  /** True to receive a state token with every move result (to go on with unary calls). */
  readonly stateTokens?: boolean;
}

export class PlayStreamSession {
  private constructor(
    private readonly requests: RequestQueue,
    private readonly responses: AsyncIterator<PlayStreamResponse>,
    private readonly abort: AbortController,
    /** The stream's first answer: the table, the events so far, the view and the tokens. */
    readonly opened: StreamOpened,
  ) {}

  /** Open a stream and wait for its StreamOpened answer. */
  static async open(client: BigTwoClient, open: StreamOpenOptions, settings: CallSettings = {}): Promise<PlayStreamSession> {
    const requests = new RequestQueue();
    const abort = new AbortController();
    settings.signal?.addEventListener("abort", () => abort.abort());
    const options = { ...callOptions(settings), signal: abort.signal };
    requests.push(
      create(PlayStreamRequestSchema, {
        message: {
          case: "open",
          value: {
            game: { game: { case: "stateToken", value: open.stateToken } },
            ...(open.viewSeat !== undefined && { viewSeat: open.viewSeat }),
            stateTokens: open.stateTokens ?? false,
          },
        },
      }),
    );
    const responses = client.playStream(requests, options)[Symbol.asyncIterator]();
    try {
      const first = await responses.next();
      if (first.done || first.value.message.case !== "opened") {
        throw new ProtocolError("the stream did not answer its open with StreamOpened");
      }
      return new PlayStreamSession(requests, responses, abort, first.value.message.value);
    } catch (thrown) {
      requests.end();
      abort.abort();
      throw toBigTwoError(thrown);
    }
  }

  /** Send a move and wait for its result (validateOnly: judge it without applying it). */
  async move(move: SentMove, validateOnly = false): Promise<StreamMoveResult> {
    this.requests.push(
      create(PlayStreamRequestSchema, {
        message: { case: "move", value: { move: { index: move.index, seat: move.seat, text: move.text }, validateOnly } },
      }),
    );
    let answer: IteratorResult<PlayStreamResponse>;
    try {
      answer = await this.responses.next();
    } catch (thrown) {
      throw toBigTwoError(thrown);
    }
    if (answer.done || answer.value.message.case !== "moveResult") {
      throw new ProtocolError(`the stream ended or answered out of order at move ${move.index}`);
    }
    return answer.value.message.value;
  }

  /** End the stream: half-close it, and cancel whatever is still in flight. */
  async close(): Promise<void> {
    this.requests.end();
    try {
      await this.responses.return?.();
    } catch {
      // The stream may already have failed; closing it has nothing left to report.
    }
    this.abort.abort();
  }
}
