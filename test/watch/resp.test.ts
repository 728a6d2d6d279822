import { createServer, Socket, type Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReplyParser, RespConnection, type Reply } from '../../src/watch/resp.js';

/** A server that answers PING with +PONG and hands the test its side of the connection. */
async function fakeRedis(): Promise<{ server: Server; port: number; peer: Promise<Socket>; received: () => string }> {
  let received = '';
  let accept!: (socket: Socket) => void;
  const peer = new Promise<Socket>((resolve) => (accept = resolve));
  const server = createServer((socket) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.endsWith('*1\r\n$4\r\nPING\r\n')) socket.write('+PONG\r\n');
    });
    accept(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, peer, received: () => received };
}

const pmessage = (key: string, event: string) => {
  const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
  return `*4\r\n${bulk('pmessage')}${bulk('__keyspace@*__:*')}${bulk(`__keyspace@0__:${key}`)}${bulk(event)}`;
};

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.splice(0).forEach((c) => c());
  vi.restoreAllMocks();
});

describe('a RESP connection', () => {
  it('stamps every message of a chunk with when the chunk arrived, not when its turn came', async () => {
    const { server, port, peer } = await fakeRedis();
    const got: { event: string; arrivedMs: number; handledMs: number }[] = [];
    const connection = await RespConnection.open(
      { host: '127.0.0.1', port, tls: false },
      {
        timeoutMs: 5000,
        onPush: ([, , , event], arrivedMs) => {
          got.push({ event: String(event), arrivedMs, handledMs: performance.now() });
          busyFor(5); // the work on one message delays the next one's turn
        },
      },
    );
    cleanups.push(() => connection.close(), () => server.close());
    const before = performance.now();
    (await peer).write(pmessage('lock:a', 'set') + pmessage('lock:b', 'set') + pmessage('lock:a', 'del'));
    await vi.waitFor(() => expect(got).toHaveLength(3));
    expect(got.map((g) => g.event)).toEqual(['set', 'set', 'del']);
    // One chunk, one stamp: lock:a's hold is not lengthened by the 10 ms spent on the messages before its `del`.
    expect(new Set(got.map((g) => g.arrivedMs)).size).toBe(1);
    expect(got[0]!.arrivedMs).toBeGreaterThanOrEqual(before);
    // The control: reading the clock per message, as it is handled, would have put 10 ms between them.
    expect(got[2]!.handledMs - got[0]!.handledMs).toBeGreaterThanOrEqual(9);
  });

  it('writes the commands sent in one turn of the event loop at once, in order, and answers each', async () => {
    const { server, port, peer, received } = await fakeRedis();
    const connection = await RespConnection.open({ host: '127.0.0.1', port, tls: false }, { timeoutMs: 5000 });
    cleanups.push(() => connection.close(), () => server.close());
    const redis = await peer;
    const writes = vi.spyOn(Socket.prototype, 'write');
    // Writes by the connection to the fake Redis: not the fake Redis answering it, nor any other socket in this
    // process (a worker runs other files' leftovers too).
    const written = () =>
      writes.mock.contexts.filter((socket) => socket !== redis && (socket as Socket).remotePort === port).length;
    const replies = Array.from({ length: 50 }, (_, i) => connection.send(['PTTL', Buffer.from(`lock:${i}`)]));
    expect(written()).toBe(0); // not yet: more may come in this turn
    await vi.waitFor(() => expect(received()).toContain('lock:49'));
    expect(written()).toBe(1);
    expect(received()).toContain('*2\r\n$4\r\nPTTL\r\n$6\r\nlock:0\r\n*2\r\n$4\r\nPTTL\r\n$6\r\nlock:1\r\n');
    redis.write(Array.from({ length: 50 }, (_, i) => `:${i === 7 ? -2 : 1000 + i}\r\n`).join(''));
    const answers = await Promise.all(replies);
    expect(answers[0]).toBe(1000);
    expect(answers[7]).toBe(-2);
    expect(answers[49]).toBe(1049);

    // The control: a command awaited before the next is sent goes in a write of its own.
    writes.mockClear();
    for (let i = 0; i < 3; i++) {
      const reply = connection.send(['PTTL', 'k']);
      await vi.waitFor(() => expect(written()).toBe(i + 1));
      redis.write(':-1\r\n');
      expect(await reply).toBe(-1);
    }
  });

  it('rejects the commands not yet written when it closes', async () => {
    const { server, port } = await fakeRedis();
    const connection = await RespConnection.open({ host: '127.0.0.1', port, tls: false }, { timeoutMs: 5000 });
    cleanups.push(() => server.close());
    const reply = connection.send(['PTTL', 'k']);
    connection.close();
    await expect(reply).rejects.toThrow();
    await expect(connection.send(['PING'])).rejects.toThrow('connection closed');
  });
});

describe('pattern messages read in place', () => {
  it('hands over the channel and event of each, split anywhere, between other replies, as the general reading reads them', () => {
    const wire = Buffer.from(`*3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:1\r\n${pmessage('lock:é', 'set')}:7\r\n${pmessage('k', 'expired')}*4\r\n$1\r\na\r\n:1\r\n:2\r\n:3\r\n`);
    const expected = [['psubscribe', '*', 1], ['__keyspace@0__:lock:é', 'set'], 7, ['__keyspace@0__:k', 'expired'], ['a', 1, 2, 3]];
    const show = (r: Reply): unknown => (Buffer.isBuffer(r) ? r.toString() : Array.isArray(r) ? r.map(show) : r);
    for (let cut = 0; cut <= wire.length; cut++) {
      const got: unknown[] = [];
      const parser = new ReplyParser(
        (r) => got.push(show(r)),
        (chunk, channelStart, channelEnd, eventStart, eventEnd) => got.push([chunk.toString('utf8', channelStart, channelEnd), chunk.toString('latin1', eventStart, eventEnd)]),
      );
      parser.push(wire.subarray(0, cut));
      parser.push(wire.subarray(cut));
      expect(got).toEqual(expected);
    }
    // The control: without the in-place reader, the same bytes come as replies (the pattern among them).
    const general: unknown[] = [];
    new ReplyParser((r) => general.push(show(r))).push(wire);
    expect(general[1]).toEqual(['pmessage', '__keyspace@*__:*', '__keyspace@0__:lock:é', 'set']);
  });
});

describe('RESP integers', () => {
  it('reads negative and multi-digit integers split anywhere, and refuses a malformed one', () => {
    const wire = Buffer.from(':-2\r\n:-1\r\n:1234567\r\n*2\r\n:0\r\n$-1\r\n');
    for (let cut = 0; cut <= wire.length; cut++) {
      const got: Reply[] = [];
      const parser = new ReplyParser((r) => got.push(r));
      parser.push(wire.subarray(0, cut));
      parser.push(wire.subarray(cut));
      expect(got).toEqual([-2, -1, 1234567, [0, null]]);
    }
    expect(() => new ReplyParser(() => undefined).push(Buffer.from(':12x\r\n'))).toThrow(/RESP integer/);
  });
});
