import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { closedText, connectionFailureText, noAnswerText } from '../redis-url.js';
import { ReplyParser, type Reply } from './reply-parser.js';

export { ReplyParser, type OnPmessage, type Reply } from './reply-parser.js';

/**
 * A minimal RESP2 connection to one Redis node, for `watch`: a subscriber must
 * stamp each notification the moment it arrives and know exactly when its
 * connection dropped, on every master of a Cluster, whichever client library
 * the user has (or none). Commands are pipelined; replies come back in order.
 */

export interface NodeAddress {
  host: string;
  port: number;
  tls: boolean;
  username?: string | undefined;
  password?: string | undefined;
}

/**
 * Commands' bytes, appended to one buffer that is reused: a PTTL per lock costs no buffers of its own,
 * only the copy of what one turn of the event loop sent, when it is written.
 */
class CommandBytes {
  private bytes = Buffer.allocUnsafe(4096);
  private length = 0;

  get empty(): boolean {
    return this.length === 0;
  }

  append(args: readonly (string | Buffer | number)[]): void {
    this.line(0x2a, args.length);
    for (const arg of args) {
      if (Buffer.isBuffer(arg)) {
        this.line(0x24, arg.length);
        this.room(arg.length + 2);
        this.length += arg.copy(this.bytes, this.length);
      } else {
        const s = typeof arg === 'string' ? arg : String(arg);
        const n = Buffer.byteLength(s);
        this.line(0x24, n);
        this.room(n + 2);
        this.length += this.bytes.write(s, this.length, n, 'utf8');
      }
      this.bytes[this.length++] = 0x0d;
      this.bytes[this.length++] = 0x0a;
    }
  }

  /** The bytes appended since the last take, as a buffer of their own (the socket may keep it until it is sent). */
  take(): Buffer {
    const taken = Buffer.allocUnsafe(this.length);
    this.bytes.copy(taken, 0, 0, this.length);
    this.length = 0;
    // After a flood, not kept at its largest for ever.
    if (this.bytes.length > 1 << 20) this.bytes = Buffer.allocUnsafe(4096);
    return taken;
  }

  /** `*n` or `$n` and its CRLF. */
  private line(type: number, n: number): void {
    this.room(24);
    this.bytes[this.length++] = type;
    this.length += this.bytes.write(String(n), this.length, 'latin1');
    this.bytes[this.length++] = 0x0d;
    this.bytes[this.length++] = 0x0a;
  }

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.length + n));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

/** The bytes of one command. */
export function encodeCommand(args: readonly (string | Buffer | number)[]): Buffer {
  const bytes = new CommandBytes();
  bytes.append(args);
  return bytes.take();
}

/**
 * A push message and when the chunk it came in arrived (`performance.now()`): every message of a chunk
 * gets its arrival, not the moment its turn came, which is later by the work on the messages before it.
 */
export type OnPush = (message: Reply[], arrivedMs: number) => void;

/** A pattern message read in place ({@link OnPmessage}), with when the chunk it came in arrived. */
export type OnPmessageAt = (chunk: Buffer, channelStart: number, channelEnd: number, eventStart: number, eventEnd: number, arrivedMs: number) => void;

export interface OpenOptions {
  timeoutMs: number;
  onPush?: OnPush;
  /** Pattern messages, read without allocating (they then do not reach `onPush`). */
  onPmessage?: OnPmessageAt;
  onClose?: (error?: Error) => void;
}

/** One open connection; `onPush` gets the messages a subscribed connection receives, `onClose` fires once. */
export class RespConnection {
  private readonly pending: { resolve: (reply: Reply) => void; reject: (error: Error) => void }[] = [];
  /** Commands sent since the last write: written together once this turn of the event loop is over. */
  private readonly outgoing = new CommandBytes();
  private closed = false;
  private arrivedMs = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly onPush: OnPush | undefined,
    onPmessage: OnPmessageAt | undefined,
  ) {
    const parser = new ReplyParser(
      (reply) => this.dispatch(reply),
      onPmessage && ((chunk, channelStart, channelEnd, eventStart, eventEnd) => onPmessage(chunk, channelStart, channelEnd, eventStart, eventEnd, this.arrivedMs)),
    );
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
  static async open(node: NodeAddress, options: OpenOptions): Promise<RespConnection> {
    const socket = node.tls ? connectTls({ host: node.host, port: node.port, servername: node.host }) : connectTcp({ host: node.host, port: node.port });
    socket.setNoDelay(true);
    const connection = new RespConnection(socket, options.onPush, options.onPmessage);
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
      if (this.outgoing.empty) process.nextTick(this.flush);
      this.outgoing.append(args);
    });
  }

  private readonly flush = (): void => {
    const bytes = this.outgoing.take();
    // Closed in the meantime: the commands' promises are (or will be) rejected with why.
    if (!this.socket.destroyed) this.socket.write(bytes);
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
