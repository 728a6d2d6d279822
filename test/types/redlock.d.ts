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
    acquire(resources: string[], duration: number, settings?: { retryCount?: number; retryDelay?: number }): Promise<Lock>;
    release(lock: Lock, settings?: { retryCount?: number }): Promise<unknown>;
    extend(lock: Lock, duration: number): Promise<Lock>;
    readonly scripts: Record<'acquireScript' | 'extendScript' | 'releaseScript', { value: string; hash: string }>;
    using<T>(resources: string[], duration: number, routine: (signal: AbortSignal & { error?: Error }) => Promise<T>): Promise<T>;
  }
}

// node-redlock 4.2.0 (installed as `redlock4`) ships no types: the part the tests use.
declare module 'redlock4' {
  type Callback<T> = (error: Error | null, value: T) => void;

  namespace Redlock {
    interface Lock {
      readonly resource: string | string[];
      readonly value: string;
      unlock(callback?: Callback<void>): Promise<void>;
      extend(ttl: number, callback?: Callback<Lock>): Promise<Lock>;
    }
  }

  class Redlock {
    constructor(clients: unknown[], options?: { driftFactor?: number; retryCount?: number; retryDelay?: number; retryJitter?: number });
    lock(resource: string | string[], ttl: number, callback?: Callback<Redlock.Lock>): Promise<Redlock.Lock>;
    unlock(lock: Redlock.Lock, callback?: Callback<void>): Promise<void>;
    readonly scripts: Record<'lockScript' | 'unlockScript' | 'extendScript', { value: string; hash: string }>;
  }

  export = Redlock;
}
