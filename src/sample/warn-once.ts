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

/** A warning of any part: a `kind` to tell it apart (reported once each), and what happened. */
export interface Warning<K extends string> {
  kind: K;
  message: string;
  cause?: unknown;
}

/**
 * Reports each kind of warning once, to a callback and as a `warning` event of
 * `emitter` (when given). When nobody listens (no callback, no `warning`
 * listener), it goes to `process.emitWarning` instead, which Node prints as one
 * line on stderr: a part that loses samples is never silent. A throwing
 * listener never reaches the caller of `record()`, a Redis command or a timer.
 * Every door and recorder warns through it, so all warn in one way.
 */
export class WarnOnce<K extends string = RecorderWarning['kind']> {
  private readonly warned = new Set<K>();

  constructor(
    private readonly emitter: EventEmitter | undefined,
    private readonly callback: ((warning: Warning<K>) => void) | undefined,
  ) {}

  /** Whether `kind` was reported already. */
  has(kind: K): boolean {
    return this.warned.has(kind);
  }

  warn(kind: K, message: string, cause?: unknown): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    const warning: Warning<K> = cause === undefined ? { kind, message } : { kind, message, cause };
    try {
      this.callback?.(warning);
    } catch {
      /* ignored on purpose */
    }
    try {
      const listened = this.emitter !== undefined && this.emitter.listenerCount('warning') > 0;
      if (this.emitter && (this.callback || listened)) this.emitter.emit('warning', warning);
      else if (!this.callback) emitProcessWarning(kind, message);
    } catch {
      /* ignored on purpose */
    }
  }
}

/** The one way ttl-advisor speaks when nobody listens: a process warning, `TTL_ADVISOR_<KIND>`. */
export function emitProcessWarning(kind: string, message: string): void {
  process.emitWarning(`ttl-advisor: ${message}`, { type: 'TtlAdvisorWarning', code: `TTL_ADVISOR_${kind.toUpperCase().replace(/-/g, '_')}` });
}
