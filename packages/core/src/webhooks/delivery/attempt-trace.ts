import type { SendResult } from '../transport/send.ts';

/** What a trace of one delivery attempt may show: ids and names, never the URL's path or query, a header or a secret. */
export interface AttemptInfo {
  deliveryId: string;
  /** Null for a test ping, which belongs to no event. */
  eventId: string | null;
  event: string;
  endpointId: string;
  organizationId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** The receiver's URL: a tracer keeps its host and port only (paths and queries may carry the receiver's token). */
  url: string;
}

/** Wraps the sending of one attempt, e.g. in a span; it must call `send` once and return its result. */
export type AttemptTracer = (info: AttemptInfo, send: () => Promise<SendResult>) => Promise<SendResult>;

/**
 * Unset unless tracing is on (apps/server/src/tracing): the worker then calls `send` directly, so a process without
 * tracing pays one comparison per attempt and loads nothing of OpenTelemetry.
 */
let tracer: AttemptTracer | undefined;

export function setAttemptTracer(t: AttemptTracer | undefined): void {
  tracer = t;
}

export function tracedAttempt(info: () => AttemptInfo, send: () => Promise<SendResult>): Promise<SendResult> {
  return tracer ? tracer(info(), send) : send();
}
