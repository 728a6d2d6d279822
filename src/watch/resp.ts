import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { closedText, connectionFailureText, noAnswerText } from '../redis-url.js';

/**
 * A minimal RESP2 connection to one Redis node, for `watch`: a subscriber must
 * stamp each notification the moment it arrives and know exactly when its
 * connection dropped, on every master of a Cluster, whichever client library
 * the user has (or none). Commands are pipelined; replies come back in order.
 */

/** A RESP2 reply: strings and errors as Buffers/Error, integers, nil, arrays. */
export type Reply = Buffer | number | null | Error | Reply[];

export interface NodeAddress {
  host: string;
  port: number;
  tls: boolean;
  username?: string | undefined;
  password?: string | undefined;
}

/** Reads RESP2 replies out of a stream of chunks. */
export class ReplyParser {
  private buffer: Buffer = Buffer.alloc(0);
  private pos = 0;

  constructor(private readonly onReply: (reply: Reply) => void) {}

  push(chunk: Buffer): void {
    this.buffer = this.pos < this.buffer.length ? Buffer.concat([this.buffer.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
    for (;;) {
      const start = this.pos;
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

/** Appends the bytes of one command to `parts`. */
function encodeInto(parts: Buffer[], args: readonly (string | Buffer | number)[]): void {
  let text = `*${args.length}\r\n`;
  for (const arg of args) {
    if (Buffer.isBuffer(arg)) {
      parts.push(Buffer.from(`${text}$${arg.length}\r\n`), arg);
      text = '\r\n';
    } else {
      const s = String(arg);
      text += `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
    }
  }
  parts.push(Buffer.from(text));
}

/** The bytes of one command. */
export function encodeCommand(args: readonly (string | Buffer | number)[]): Buffer {
  const parts: Buffer[] = [];
  encodeInto(parts, args);
  return Buffer.concat(parts);
}

/**
 * A push message and when the chunk it came in arrived (`performance.now()`): every message of a chunk
 * gets its arrival, not the moment its turn came, which is later by the work on the messages before it.
 */
export type OnPush = (message: Reply[], arrivedMs: number) => void;

/** One open connection; `onPush` gets the messages a subscribed connection receives, `onClose` fires once. */
export class RespConnection {
  private readonly pending: { resolve: (reply: Reply) => void; reject: (error: Error) => void }[] = [];
  /** Commands sent since the last write: written together once this turn of the event loop is over. */
  private outgoing: Buffer[] = [];
  private closed = false;
  private arrivedMs = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly onPush: OnPush | undefined,
  ) {
    const parser = new ReplyParser((reply) => this.dispatch(reply));
    socket.on('data', (chunk: Buffer) => {
      // The clock is read here, where the bytes arrive, and not again per message.
      this.arrivedMs = performance.now();
      try {
        parser.push(chunk);
      } catch (error) {
        socket.destroy(error as Error);
      }
    });
  }

  /** Connects, authenticates, and resolves once Redis answered; rejects with why not within `timeoutMs`. */
  static async open(node: NodeAddress, options: { timeoutMs: number; onPush?: OnPush; onClose?: (error?: Error) => void }): Promise<RespConnection> {
    const socket = node.tls ? connectTls({ host: node.host, port: node.port, servername: node.host }) : connectTcp({ host: node.host, port: node.port });
    socket.setNoDelay(true);
    const connection = new RespConnection(socket, options.onPush);
    let failure: Error | undefined;
    let opened = false;
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failure ??= new Error(connectionFailureText(error, node), { cause: error });
    });
    // `onClose` is for a connection that was open: a failed open is the rejection below.
    socket.on('close', () => connection.closeAll(failure ?? new Error(closedText(node)), opened ? options.onClose : undefined));
    const timer = setTimeout(() => socket.destroy(new Error(noAnswerText(node, options.timeoutMs))), options.timeoutMs);
    try {
      if (node.password !== undefined) {
        const auth = node.username ? ['AUTH', node.username, node.password] : ['AUTH', node.password];
        const reply = await connection.send(auth);
        if (reply instanceof Error) throw new Error(connectionFailureText(reply, node), { cause: reply });
      }
      const pong = await connection.send(['PING']);
      // A server that wants a password the URL lacks answers NOAUTH: worded as the CLI words it.
      if (pong instanceof Error) throw new Error(connectionFailureText(pong, node), { cause: pong });
      opened = true;
      return connection;
    } catch (error) {
      socket.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /**
   * Sends a command; resolves with its reply (a Redis error is a resolved `Error`, a lost connection a rejection).
   * Pipelined: the commands sent while one chunk of notifications is read (a PTTL per lock) leave in one write.
   */
  send(args: readonly (string | Buffer | number)[]): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      if (this.outgoing.length === 0) process.nextTick(this.flush);
      encodeInto(this.outgoing, args);
    });
  }

  private readonly flush = (): void => {
    const parts = this.outgoing;
    this.outgoing = [];
    // Closed in the meantime: the commands' promises are (or will be) rejected with why.
    if (!this.socket.destroyed) this.socket.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
  };

  close(): void {
    this.socket.destroy();
  }

  private dispatch(reply: Reply): void {
    // Pub/sub messages arrive as arrays headed `message`/`pmessage`; everything else answers a command.
    if (this.onPush && Array.isArray(reply) && Buffer.isBuffer(reply[0]) && (reply[0].equals(PMESSAGE) || reply[0].equals(MESSAGE))) {
      this.onPush(reply, this.arrivedMs);
      return;
    }
    this.pending.shift()?.resolve(reply);
  }

  private closeAll(error: Error, onClose: ((error?: Error) => void) | undefined): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.pending.splice(0)) p.reject(error);
    onClose?.(error);
  }
}

const PMESSAGE = Buffer.from('pmessage');
const MESSAGE = Buffer.from('message');

// The watcher takes it from here, beside the connection; the URL rules are shared with the CLI (redis-url.ts).
export { nodeOfUrl } from '../redis-url.js';
