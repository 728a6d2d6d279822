// node-redlock 5 ships its types at dist/index.d.ts without a "types" condition in its
// "exports", so TypeScript's NodeNext resolution cannot see them: the part the tests use.
declare module 'redlock' {
  import type { Cluster, Redis } from 'ioredis';

  export interface Lock {
    readonly resources: string[];
    readonly value: string;
    readonly expiration: number;
    release(): Promise<unknown>;
    extend(duration: number): Promise<Lock>;
  }

  export default class Redlock {
    constructor(
      clients: Iterable<Redis | Cluster>,
      settings?: { driftFactor?: number; retryCount?: number; retryDelay?: number; retryJitter?: number; automaticExtensionThreshold?: number },
    );
    acquire(resources: string[], duration: number): Promise<Lock>;
    release(lock: Lock): Promise<unknown>;
    using<T>(resources: string[], duration: number, routine: (signal: AbortSignal & { error?: Error }) => Promise<T>): Promise<T>;
  }
}
