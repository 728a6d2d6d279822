/**
 * Reads RESP2 replies out of a stream of socket chunks, for `watch`'s own connection (resp.ts):
 * replies come back whole, pattern messages read in place, without allocating.
 */

/** A RESP2 reply: strings and errors as Buffers/Error, integers, nil, arrays. */
export type Reply = Buffer | number | null | Error | Reply[];

/**
 * A pattern message read in place: its channel and its event are the bytes `start`–`end` of `chunk`,
 * valid only during the call. Nothing is allocated for it: a watcher reads thousands a second.
 */
export type OnPmessage = (chunk: Buffer, channelStart: number, channelEnd: number, eventStart: number, eventEnd: number) => void;

/** How every pattern message begins: `*4`, then the bulk string `pmessage`. */
const PMESSAGE_HEAD = Buffer.from('*4\r\n$8\r\npmessage\r\n');

/** Reads RESP2 replies out of a stream of chunks; pattern messages go to `onPmessage` when one is given. */
export class ReplyParser {
  private buffer: Buffer = Buffer.alloc(0);
  private pos = 0;

  constructor(
    private readonly onReply: (reply: Reply) => void,
    private readonly onPmessage?: OnPmessage,
  ) {}

  push(chunk: Buffer): void {
    this.buffer = this.pos < this.buffer.length ? Buffer.concat([this.buffer.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
    for (;;) {
      const start = this.pos;
      if (this.onPmessage && this.isPmessage()) {
        if (this.readPmessage(this.onPmessage)) continue;
        this.pos = start;
        return;
      }
      const reply = this.read();
      if (reply === undefined) {
        this.pos = start;
        return;
      }
      this.onReply(reply);
    }
  }

  /**
   * One whole reply from `pos`, or `undefined` (and `pos` anywhere) when it has not all arrived.
   * Strings are views of the chunk they came in, not copies: a caller that keeps one copies it.
   */
  private read(): Reply | undefined {
    const buffer = this.buffer;
    const type = buffer[this.pos];
    switch (type) {
      case undefined:
        return undefined;
      case 0x2b: // +
      case 0x2d: {
        // -
        const end = buffer.indexOf(0x0d, this.pos);
        if (end < 0 || end + 1 >= buffer.length) return undefined;
        const line = buffer.toString('latin1', this.pos + 1, end);
        this.pos = end + 2;
        return type === 0x2b ? Buffer.from(line, 'latin1') : new Error(line);
      }
      case 0x3a: // :
        return this.readInteger();
      case 0x24: {
        // $
        const n = this.readInteger();
        if (n === undefined) return undefined;
        if (n < 0) return null;
        if (this.pos + n + 2 > buffer.length) return undefined;
        const value = buffer.subarray(this.pos, this.pos + n);
        this.pos += n + 2;
        return value;
      }
      case 0x2a: {
        // *
        const n = this.readInteger();
        if (n === undefined) return undefined;
        if (n < 0) return null;
        const items: Reply[] = new Array<Reply>(n);
        for (let i = 0; i < n; i++) {
          const item = this.read();
          if (item === undefined) return undefined;
          items[i] = item;
        }
        return items;
      }
      default:
        throw new Error(`unexpected RESP type byte ${String(type)}`);
    }
  }

  private isPmessage(): boolean {
    const buffer = this.buffer;
    const pos = this.pos;
    if (pos + PMESSAGE_HEAD.length > buffer.length) return false; // not all here: the general path waits as well
    for (let i = 0; i < PMESSAGE_HEAD.length; i++) if (buffer[pos + i] !== PMESSAGE_HEAD[i]) return false;
    return true;
  }

  /** The pattern message at `pos` (its head checked), handed over in place; `false` when it has not all arrived. */
  private readPmessage(onPmessage: OnPmessage): boolean {
    const buffer = this.buffer;
    this.pos += PMESSAGE_HEAD.length;
    let channelStart = 0;
    let channelEnd = 0;
    // The pattern, the channel, the event: three bulk strings.
    for (let item = 0; item < 3; item++) {
      if (buffer[this.pos] === undefined) return false;
      if (buffer[this.pos] !== 0x24) throw new Error(`unexpected RESP type byte ${String(buffer[this.pos])} in a pattern message`);
      const n = this.readInteger();
      if (n === undefined || this.pos + n + 2 > buffer.length) return false;
      if (n < 0) throw new Error('a nil string in a pattern message');
      const start = this.pos;
      this.pos += n + 2;
      if (item === 1) {
        channelStart = start;
        channelEnd = start + n;
      } else if (item === 2) onPmessage(buffer, channelStart, channelEnd, start, start + n);
    }
    return true;
  }

  /** The integer on the line at `pos` (after its type byte), moving `pos` past the line; `undefined` when it has not all arrived. */
  private readInteger(): number | undefined {
    const buffer = this.buffer;
    let i = this.pos + 1;
    const negative = buffer[i] === 0x2d;
    if (negative) i++;
    let n = 0;
    // Read digit by digit: a notification has three of these lines, and a string for each costs more than the rest of it.
    for (let byte = buffer[i]; byte !== 0x0d; byte = buffer[++i]) {
      if (byte === undefined) return undefined;
      if (byte < 0x30 || byte > 0x39) throw new Error(`unexpected byte ${byte} in a RESP integer`);
      n = n * 10 + byte - 0x30;
    }
    if (i + 1 >= buffer.length) return undefined;
    this.pos = i + 2;
    return negative ? -n : n;
  }
}
