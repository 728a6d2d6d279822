import type { EventEmitter } from 'node:events';

/** A problem a recorder hit and survived. Reported once per `kind`. */
export interface RecorderWarning {
  kind:
    | 'open-failed'
    | 'write-failed'
    | 'buffer-full'
    | 'invalid-sample'
    | 'pattern-overflow'
    | 'unreadable-rollup'
    | 'file-replaced'
    /** The file reached `maxDatabaseBytes`: raw rows stop, rollups go on. */
    | 'file-full';
  message: string;
  cause?: unknown;
}

/**
 * Reports each kind of warning once, to a callback and as a `warning` event.
 * When nobody listens (no callback, no `warning` listener), it goes to
 * `process.emitWarning` instead, which Node prints as one line on stderr: a
 * recorder that loses samples is never silent. A throwing listener never
 * reaches the caller of `record()` or a timer.
 */
export class WarnOnce {
  private readonly warned = new Set<RecorderWarning['kind']>();

  constructor(
    private readonly emitter: EventEmitter,
    private readonly callback: ((warning: RecorderWarning) => void) | undefined,
  ) {}

  warn(kind: RecorderWarning['kind'], message: string, cause?: unknown): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    const warning: RecorderWarning = cause === undefined ? { kind, message } : { kind, message, cause };
    try {
      this.callback?.(warning);
    } catch {
      /* ignored on purpose */
    }
    try {
      if (this.callback || this.emitter.listenerCount('warning') > 0) this.emitter.emit('warning', warning);
      else process.emitWarning(`ttl-advisor: ${message}`, { type: 'TtlAdvisorWarning', code: `TTL_ADVISOR_${kind.toUpperCase().replace(/-/g, '_')}` });
    } catch {
      /* ignored on purpose */
    }
  }
}
